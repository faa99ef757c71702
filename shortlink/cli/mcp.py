"""`shortlink mcp`: the MCP tools over stdio."""

from __future__ import annotations

import argparse
import asyncio

from shortlink.cli.common import command, config_of


def register(commands) -> None:
    mcp = command(
        commands,
        "mcp",
        run_mcp,
        "the MCP tools over stdio for local assistants; key from SHORTLINK_API_KEY",
        json_output=False,
    )
    mcp.add_argument("--url", help="relay to this running instance (its base URL) instead of using the database")


def run_mcp(args: argparse.Namespace) -> None:
    from shortlink.mcp import take_api_key

    key = take_api_key()  # before the SDK loads: a missing key stops at once
    from shortlink.mcp import stdio

    if args.url:
        asyncio.run(stdio.serve_remote(args.url, key))
    else:
        asyncio.run(stdio.serve_local(config_of(args), key))
