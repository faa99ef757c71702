"""The real app plus one bare endpoint, served by one ASGI server process.

The bare endpoint (/bench/bare, a constant 302) runs in the same process, server
and framework as the redirect route, so their throughput ratio measures what our
own work per click costs.
"""
from __future__ import annotations

import argparse

from litestar import Response, get

from shortlink.config import load_config
from shortlink.server import build_server
from shortlink.web.app import create_app


@get("/bench/bare", include_in_schema=False)
async def bare() -> Response:
    return Response(content=b"", status_code=302, headers={"Location": "https://example.com/"})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--server", choices=["uvicorn", "granian"], default="uvicorn")
    args = parser.parse_args()
    config = load_config(args.config)
    app = create_app(config)
    app.register(bare)
    if args.server == "uvicorn":
        build_server(config, app).run()     # exactly what `shortlink serve` runs
    else:
        from granian.server.embed import Server
        import asyncio
        server = Server(app, address=config.server.host, port=config.server.port, interface="asgi")
        asyncio.run(server.serve())


if __name__ == "__main__":
    main()
