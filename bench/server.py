"""The real app plus one bare endpoint, served by one ASGI server process.

The bare endpoint (/bench/bare, a constant 302) runs in the same process, server
and framework as the redirect route, so their throughput ratio measures what our
own work per click costs.

uvicorn runs exactly as `shortlink serve` runs it. granian runs as its own
command-line server (its Rust HTTP thread beside the Python one), on the app
that `app_from_environment` builds; it is not a dependency of shortlink
(`pip install -e '.[bench]'` to compare).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys

from litestar import Litestar, Response, get

from shortlink.config import load_config
from shortlink.server import serve
from shortlink.web.asgi import create_app

CONFIG_VARIABLE = "BENCH_SHORTLINK_CONFIG"  # not SHORTLINK_*: those are config overrides


@get("/bench/bare", include_in_schema=False)
async def bare() -> Response:
    return Response(content=b"", status_code=302, headers={"Location": "https://example.com/"})


def bench_app(config) -> Litestar:
    app = create_app(config)
    app.register(bare)
    return app


def app_from_environment() -> Litestar:
    """granian's app factory: the config file is named by BENCH_SHORTLINK_CONFIG."""
    config = load_config(os.environ[CONFIG_VARIABLE])
    logging.getLogger("shortlink.access").setLevel(logging.INFO if config.server.access_log else logging.WARNING)
    return bench_app(config)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--server", choices=["uvicorn", "granian"], default="uvicorn")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn only; more than 1 needs [redis] url")
    args = parser.parse_args()
    config = load_config(args.config)
    if args.server == "uvicorn":
        serve(config, args.workers, bench_app)  # exactly what `shortlink serve` runs
        return
    granian = shutil.which("granian", path=os.path.dirname(sys.executable)) or shutil.which("granian")
    if granian is None:
        sys.exit("granian is not installed: pip install granian")
    os.environ[CONFIG_VARIABLE] = args.config
    os.execv(
        granian,
        [
            granian,
            "--interface",
            "asgi",
            "--factory",
            "--workers",
            "1",
            "--loop",
            "uvloop",
            "--host",
            config.server.host,
            "--port",
            str(config.server.port),
            "--no-access-log",
            "--log-level",
            "warning",
            "bench.server:app_from_environment",
        ],
    )


if __name__ == "__main__":
    main()
