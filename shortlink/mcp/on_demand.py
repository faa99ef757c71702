"""/mcp with the MCP SDK loaded on the first request to it, not at start-up.

The SDK and the pydantic models it brings take over a second of CPU to import and megabytes
of memory (docs/performance.md); a server that is never asked for /mcp never pays for them.
The first request waits while a worker thread loads them; every later one goes straight to
the endpoint (`shortlink.mcp.http.McpEndpoint`).

The SDK's session manager runs in a task of its own, started by the first request and ended
by the application's shutdown, as it would run for the application's whole life.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from litestar.types import Receive, Scope, Send

from shortlink.wiring import Services

if TYPE_CHECKING:
    from shortlink.mcp.http import McpEndpoint


class McpOnDemand:
    def __init__(self, services: Services):
        self.services = services
        self.endpoint: McpEndpoint | None = None
        self._needed: asyncio.Event | None = None
        self._ready: asyncio.Future[McpEndpoint] | None = None

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: object) -> AsyncIterator[None]:
        self.endpoint = None
        self._needed = needed = asyncio.Event()
        self._ready = ready = asyncio.get_running_loop().create_future()
        finished = asyncio.Event()
        runner = asyncio.create_task(self._run(needed, ready, finished))
        try:
            yield
        finally:
            finished.set()
            needed.set()
            await runner
            if not ready.done():  # shut down before the first request: nothing to wait for
                ready.cancel()

    async def _run(self, needed: asyncio.Event, ready: asyncio.Future[McpEndpoint], finished: asyncio.Event) -> None:
        await needed.wait()
        if finished.is_set():
            return
        try:
            endpoint = await asyncio.to_thread(_load, self.services)
            async with endpoint.lifespan(None):
                ready.set_result(endpoint)
                await finished.wait()
        except Exception as exc:  # an SDK that cannot load: each request is told (a 500, logged)
            if not ready.done():
                ready.set_exception(exc)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self.endpoint
        if endpoint is None:
            assert self._needed is not None and self._ready is not None, "served outside the lifespan"
            self._needed.set()
            endpoint = self.endpoint = await asyncio.shield(self._ready)
        await endpoint(scope, receive, send)


def _load(services: Services) -> McpEndpoint:
    from shortlink.mcp.http import McpEndpoint  # the import this module exists to defer

    return McpEndpoint(services)
