"""GET /links/{id}/analytics and GET /analytics: thin handlers over shortlink.analytics."""
from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter

from shortlink.analytics.ranges import parse_range
from shortlink.analytics.report import (
    AccountAnalyticsResponse,
    LinkAnalyticsResponse,
    account_analytics,
    link_analytics,
)
from shortlink.links import service
from shortlink.services import Services
from shortlink.times import utcnow
from shortlink.web.openapi import error_responses

# Strings, parsed by parse_range, so that a bad value is a VALIDATION_ERROR naming it.
Days = Annotated[str | None, QueryParameter(description="Look back this many days, 1-366. Default 30.",
                                            max_length=16)]
From = Annotated[str | None, QueryParameter(name="from", max_length=64,
                                            description="Range start: ISO 8601 date or date-time.")]
To = Annotated[str | None, QueryParameter(name="to", max_length=64, description=(
    "Range end: ISO 8601 date or date-time. Default now. A date includes that whole UTC day."))]


class AnalyticsController(Controller):
    tags = ["analytics"]

    @get("/links/{link_id:str}/analytics", responses=error_responses(400, 404),
         summary="Analytics for one link")
    async def link(self, link_id: FromPath[str], owner: NamedDependency[service.Owner],
                   services: NamedDependency[Services], days: Days = None, start: From = None,
                   end: To = None) -> LinkAnalyticsResponse:
        now = utcnow()
        span = parse_range(days, start, end, now)
        return LinkAnalyticsResponse(
            await services.db.run(link_analytics, owner.account_id, link_id, span, now))

    @get("/analytics", responses=error_responses(400), summary="Analytics across all links of the account")
    async def account(self, owner: NamedDependency[service.Owner], services: NamedDependency[Services],
                      days: Days = None, start: From = None, end: To = None) -> AccountAnalyticsResponse:
        now = utcnow()
        span = parse_range(days, start, end, now)
        return AccountAnalyticsResponse(await services.db.run(account_analytics, owner.account_id, span, now))
