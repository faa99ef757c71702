"""Running the app under an ASGI server, with a graceful stop on SIGTERM/SIGINT.

One process by default, running uvicorn's server in-process. With `workers` > 1,
uvicorn's supervisor binds the socket once and runs that many worker processes on it,
replacing any that dies; each worker is a whole server process with its own click
recorder, drained on SIGTERM as a single process is. Processes share rate limits and
link changes through Redis, and everything else through the database.

Either way one more process, niced, sends webhook events (webhooks.process): the serving
processes only write them.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable

import uvicorn
from litestar import Litestar
from uvicorn.supervisors import Multiprocess

from shortlink.config import Config, ConfigError
from shortlink.sharedstate import check_redis
from shortlink.storage import connect
from shortlink.storage.sqlite import stop_memory_statistics
from shortlink.web.accesslog import configure_access_log
from shortlink.web.asgi import create_app
from shortlink.webhooks.process import DeliveryProcess

GRACEFUL_SHUTDOWN_SECONDS = 10
# Allocations net of frees between two young collections (see tune_garbage_collection).
YOUNG_COLLECTION_THRESHOLD = 10_000


def _uvicorn_config(config: Config, app, workers: int = 1) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=config.server.host,
        port=config.server.port,
        # uvicorn's own access log prints client IPs; we log no personal data.
        access_log=False,
        proxy_headers=False,
        server_header=False,
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        log_level="info",
        workers=workers,
        factory=workers > 1,
    )


def tune_garbage_collection() -> None:
    """Put what start-up loaded out of the garbage collector's reach, and let young
    collections run less often. Run once the app's start-up is done, in server processes
    only: a test process that froze would keep every app its earlier tests left behind.

    The visitor classifier's and the click labeller's rule tables and the app itself
    are some 150,000 objects that live as long as the process. Under load a full
    collection ran several times a minute and stalled every request in flight for
    about as long as a whole 99th-percentile redirect budget (docs/behaviour.md, Storage).
    Frozen (gc.freeze), a collection walks only what was made since.

    A young collection runs once the objects made exceed those freed by the threshold.
    At CPython 3.11's 700, the objects of the visits waiting for a cache miss's read set one
    off nearly every turn of the event loop: each freed nothing, and it reset the count
    that those visits' objects, freed a turn later, would have brought down again."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])


def _production(app: Litestar) -> Litestar:
    app.on_startup.append(tune_garbage_collection)  # after the lifespan's start-up (services.start)
    return app


def build_server(config: Config, app: Litestar) -> uvicorn.Server:
    """The production server for `app`, in this process.

    Logging: Litestar's default config (the app's own log lines, on stderr) and
    uvicorn's; the access log, when on, writes bare JSON lines beside them.
    """
    server = uvicorn.Server(_uvicorn_config(config, _production(app)))
    configure_access_log(config.server.access_log)  # after both have set up logging
    return server


def delivered_by(app: Litestar, delivery: DeliveryProcess) -> Litestar:
    """`app` leaves webhook delivery to `delivery`'s process, started and stopped with it."""
    app.state.services.deliver_elsewhere(delivery.wake)
    app.on_startup.append(delivery.start)  # after the lifespan's start-up: the file is migrated
    app.on_shutdown.append(delivery.aclose)
    return app


def worker_app(make_app: Callable[[Config], Litestar], config: Config) -> Litestar:
    """The app of one worker process (called there, by uvicorn, after it set up logging)."""
    stop_memory_statistics()  # before the app's first connection
    app = make_app(config)
    app.state.services.deliver_elsewhere()  # the supervisor's delivering process polls
    configure_access_log(config.server.access_log)
    return _production(app)


def serve(config: Config, workers: int = 1, make_app: Callable[[Config], Litestar] = create_app) -> None:
    """Serve `make_app(config)` (a module-level function: workers import it by name)."""
    if workers < 1:
        raise ConfigError(f"--workers {workers}: must be at least 1")
    if workers == 1:
        stop_memory_statistics()  # before the app's first connection
        # Stopped by the app's shutdown: uvicorn raises SIGTERM again once it has shut down.
        build_server(config, delivered_by(make_app(config), DeliveryProcess(config))).run()
        return
    if not config.redis.url:
        raise ConfigError(
            f"--workers {workers} needs [redis] url (SHORTLINK_REDIS_URL): the processes share rate limits "
            "and link changes through it"
        )
    # The checks each worker would make, made once here: a bad [storage] path or an
    # unreachable Redis stops start-up in one line instead of N tracebacks.
    connect(config.storage.location).close()
    check_redis(config.redis.url)
    uvicorn_config = _uvicorn_config(config, functools.partial(worker_app, make_app, config), workers)
    delivery = DeliveryProcess(config)  # one for all the workers
    delivery.start()
    try:
        Multiprocess(uvicorn_config, sockets=[uvicorn_config.bind_socket()]).run()
    finally:
        delivery.stop()
