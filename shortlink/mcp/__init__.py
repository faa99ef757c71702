"""MCP: the service's tools for assistants, over Streamable HTTP (/mcp) and stdio (`shortlink mcp`)."""
