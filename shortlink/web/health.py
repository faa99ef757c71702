"""GET /healthz: 200 while the database answers and the click writer keeps up, else 503."""

from __future__ import annotations

from litestar import get
from litestar.di import NamedDependency
from litestar.response import Response

from shortlink.application import health
from shortlink.wiring import Services


@get("/healthz", include_in_schema=False)
async def healthz(services: NamedDependency[Services]) -> Response:
    healthy, report = await health.check(services.db, services.recorder, services.config.clicks.flush_interval_ms)
    return Response(report, status_code=200 if healthy else 503)
