"""MCP: the service's tools for assistants, over Streamable HTTP (/mcp) and stdio (`shortlink mcp`).

This module stays free of the SDK, so `shortlink mcp` without a key stops before loading it.
"""

from __future__ import annotations

import os

from shortlink.errors import ShortlinkError

KEY_VARIABLE = "SHORTLINK_API_KEY"
PATH = "/mcp"  # where the server answers MCP over Streamable HTTP


def take_api_key() -> str:
    """The key for `shortlink mcp`, taken out of the environment: nothing the command starts
    inherits it, and the configuration does not mistake it for a misspelt setting."""
    key = os.environ.pop(KEY_VARIABLE, "").strip()
    if not key:
        raise ShortlinkError(f"set {KEY_VARIABLE} to an API key (shortlink key create --email …)")
    return key
