"""Running the app under an ASGI server, with a graceful stop on SIGTERM/SIGINT."""
from __future__ import annotations

import logging

import uvicorn

from shortlink.config import Config
from shortlink.web.app import create_app

GRACEFUL_SHUTDOWN_SECONDS = 10


def serve(config: Config) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    server = uvicorn.Server(uvicorn.Config(
        create_app(config), host=config.server.host, port=config.server.port,
        # uvicorn's own access log prints client IPs; we log no personal data.
        access_log=False, proxy_headers=False, server_header=False, lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS, log_level="info",
    ))
    server.run()
