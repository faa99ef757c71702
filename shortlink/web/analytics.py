"""GET /links/{id}/analytics and GET /analytics: thin handlers over shortlink.analytics."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, get
from litestar.di import NamedDependency
from litestar.openapi.spec.enums import OpenAPIType
from litestar.params import FromPath, QueryParameter

from shortlink.accounts.schema import Principal
from shortlink.analytics.ranges import DEFAULT_DAYS, MAX_DAYS
from shortlink.analytics.report import AccountAnalyticsResponse, LinkAnalyticsResponse
from shortlink.web.openapi import error_responses
from shortlink.wiring import Services

# Litestar adds "; charset=utf-8" to a text/ type itself.
CSV = "text/csv"

# Strings, parsed by parse_range, so that a bad value is a VALIDATION_ERROR naming it
# (and "7.0" or "1e1" are not read as numbers). `days` is documented as the integer it is.
Days = Annotated[
    str,
    QueryParameter(
        schema_extra={"type": OpenAPIType.INTEGER, "minimum": 1, "maximum": MAX_DAYS, "default": DEFAULT_DAYS},
        description=f"Look back this many days, 1-{MAX_DAYS}. Default {DEFAULT_DAYS}. Ignored when from is set.",
    ),
]
From = Annotated[
    str | None,
    QueryParameter(
        name="from",
        max_length=64,
        description=("Range start: YYYY-MM-DD (00:00 UTC) or an ISO 8601 date-time with T; no offset means UTC."),
    ),
]
To = Annotated[
    str | None,
    QueryParameter(
        name="to",
        max_length=64,
        description=(
            "Range end: YYYY-MM-DD (that whole UTC day) or an ISO 8601 date-time with T; no offset means UTC. "
            "Default now."
        ),
    ),
]


class AnalyticsController(Controller):
    tags = ["analytics"]

    @get("/links/{id:str}/analytics", responses=error_responses(404), summary="Analytics for one link")
    async def link(
        self,
        id: FromPath[str],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
        days: Days = str(DEFAULT_DAYS),
        start: From = None,
        end: To = None,
    ) -> LinkAnalyticsResponse:
        return LinkAnalyticsResponse(await services.analytics.of_link(principal.account_id, id, days, start, end))

    @get("/analytics", responses=error_responses(), summary="Analytics across all links of the account")
    async def account(
        self,
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
        days: Days = str(DEFAULT_DAYS),
        start: From = None,
        end: To = None,
    ) -> AccountAnalyticsResponse:
        return AccountAnalyticsResponse(await services.analytics.of_account(principal.account_id, days, start, end))

    @get(
        "/links/{id:str}/analytics/csv",
        media_type=CSV,
        responses=error_responses(404),
        summary="Analytics for one link as CSV (extension): the same figures, as section,label,clicks,percentage",
    )
    async def link_csv(
        self,
        id: FromPath[str],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
        days: Days = str(DEFAULT_DAYS),
        start: From = None,
        end: To = None,
    ) -> Response[str]:
        text = await services.analytics.link_csv(principal.account_id, id, days, start, end)
        return _csv(text, f"analytics-{id}.csv")

    @get(
        "/analytics/csv",
        media_type=CSV,
        responses=error_responses(),
        summary="Analytics across the account as CSV (extension): the same figures, as section,label,clicks,percentage",
    )
    async def account_csv(
        self,
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
        days: Days = str(DEFAULT_DAYS),
        start: From = None,
        end: To = None,
    ) -> Response[str]:
        text = await services.analytics.account_csv(principal.account_id, days, start, end)
        return _csv(text, "analytics.csv")


def _csv(text: str, filename: str) -> Response[str]:
    return Response(text, media_type=CSV, headers={"Content-Disposition": f'attachment; filename="{filename}"'})
