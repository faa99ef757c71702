"""`shortlink mcp`: the same tools over stdio, for assistants that start a local command.

The key comes from SHORTLINK_API_KEY, never from the command line (which other users
of the machine can read in the process list). Without `--url` the tools run in this
process over the configured database, next to a running server or without one; with
`--url` this process only relays to that instance's /mcp, so the tools and their
rules are the instance's own.
"""

from __future__ import annotations

import contextlib
import importlib.metadata

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from shortlink.config import Config
from shortlink.errors import ShortlinkError
from shortlink.mcp import PATH
from shortlink.mcp import domains as domain_tools  # noqa: F401 - registers the domain tools
from shortlink.mcp import link_rules as link_rules_tools  # noqa: F401 - registers the link-rules tools
from shortlink.mcp.tools import build_server
from shortlink.wiring import Services


def endpoint(url: str) -> str:
    """An instance's base URL, or its /mcp URL itself."""
    url = url.rstrip("/")
    return url if url.endswith(PATH) else url + PATH


async def _serve(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_local(config: Config, key: str) -> None:
    services = Services(config)
    authorization = f"Bearer {key}"
    services.accounts.identify(authorization)  # a bad key stops the command with one line, before any client waits
    await services.start()
    try:
        # Looked up on every call: a key revoked meanwhile fails on its next call.
        await _serve(build_server(services, lambda _ctx: services.accounts.identify(authorization)))
    finally:
        await services.stop()


async def serve_remote(url: str, key: str) -> None:
    target = endpoint(url)
    # The SDK's client takes an httpx2 client for headers; its read timeout allows slow reports.
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(30, read=300))
    async with http, contextlib.AsyncExitStack() as stack:
        try:
            remote = await stack.enter_async_context(Client(streamable_http_client(target, http_client=http)))
        except Exception:  # the SDK reports a refused key as a generic error response
            raise ShortlinkError(f"could not connect to {target}: is the instance up, and the key valid?") from None

        async def list_tools(_ctx: ServerRequestContext, params: types.PaginatedRequestParams | None):
            return await remote.list_tools(cursor=params.cursor if params else None)

        async def call_tool(_ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
            return await remote.call_tool(params.name, params.arguments)

        await _serve(
            Server(
                "shortlink",
                version=importlib.metadata.version("shortlink"),
                instructions=remote.instructions,
                on_list_tools=list_tools,
                on_call_tool=call_tool,
            )
        )
