"""`shortlink serve`."""

from __future__ import annotations

import argparse

from shortlink.cli.common import command, config_of


def register(commands) -> None:
    serve = command(commands, "serve", run_serve, "run the server", json_output=False)
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument(
        "--workers", type=int, default=1, help="server processes on this port (more than 1 needs [redis] url)"
    )


def run_serve(args: argparse.Namespace) -> None:
    from shortlink.server import serve

    serve(config_of(args), workers=args.workers)
