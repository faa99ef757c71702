"""Running the app under an ASGI server, with a graceful stop on SIGTERM/SIGINT."""

from __future__ import annotations

import uvicorn
from litestar import Litestar

from shortlink.config import Config
from shortlink.web.accesslog import configure_access_log
from shortlink.web.app import create_app

GRACEFUL_SHUTDOWN_SECONDS = 10


def build_server(config: Config, app: Litestar | None = None) -> uvicorn.Server:
    """The production server for `app` (default: the shortlink app for `config`).

    Logging: Litestar's default config (the app's own log lines, on stderr) and
    uvicorn's; the access log, when on, writes bare JSON lines beside them.
    """
    server = uvicorn.Server(
        uvicorn.Config(
            app or create_app(config),
            host=config.server.host,
            port=config.server.port,
            # uvicorn's own access log prints client IPs; we log no personal data.
            access_log=False,
            proxy_headers=False,
            server_header=False,
            lifespan="on",
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
            log_level="info",
        )
    )
    configure_access_log(config.server.access_log)  # after both have set up logging
    return server


def serve(config: Config) -> None:
    build_server(config).run()
