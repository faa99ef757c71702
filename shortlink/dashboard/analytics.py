"""/analytics and /links/{id}/analytics: the API's figures for a range, as charts and tables."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.params import FromPath

from shortlink.accounts.schema import SessionAccount
from shortlink.analytics.ranges import DEFAULT_DAYS, MAX_DAYS
from shortlink.analytics.report import BREAKDOWN_LABELS, AnalyticsFigures
from shortlink.dashboard.guard import SignedInController
from shortlink.dashboard.render import page
from shortlink.errors import ValidationError
from shortlink.times import utcnow
from shortlink.wiring import Services

PRESETS = (7, 30, 90, 365)
BREAKDOWN_TITLES = {
    "device": "Devices",
    "browser": "Browsers",
    "os": "Operating systems",
    "country": "Countries",
    "referrer": "Referrers",
    "campaign": "Campaigns (utm_source)",
}


def range_query(request: Request) -> dict[str, str | None]:
    """`days`, `from` and `to` as the API receives them (empty fields left out).

    A preset ("last N days") means N whole UTC days, today included: a `from` date, so
    that every day but today comes from the daily rollups. (The API's `days=N` starts at
    this time of day N days ago, and that partial first day is read from raw clicks.)
    """
    query = request.query_params
    days, start, end = query.get("days") or str(DEFAULT_DAYS), query.get("from") or None, query.get("to") or None
    if start is None and end is None and days.isdigit() and 1 <= int(days) <= MAX_DAYS:
        start = (utcnow().date() - timedelta(days=int(days) - 1)).isoformat()
    return {"days": days, "start": start, "end": end}


def breakdowns(figures: AnalyticsFigures) -> list[tuple[str, list[tuple[str, int, float]], str]]:
    """The six breakdowns as (title, [(label, clicks, percentage)], the CSV's section name)."""
    result = []
    for dimension, label in BREAKDOWN_LABELS.items():
        items = getattr(figures, f"{dimension}_breakdown")
        rows = [(getattr(item, label) or "(none)", item.clicks, item.percentage) for item in items]
        result.append((BREAKDOWN_TITLES[dimension], rows, f"{dimension}Breakdown"))
    return result


def csv_address(request: Request) -> str:
    """The page's figures as CSV (shortlink.dashboard.moving), for the same range; a chart adds its section."""
    query = request.query_params
    asked = {name: query[name] for name in ("days", "from", "to") if query.get(name)}
    return f"{request.scope['path'].rstrip('/')}/csv?{urlencode(asked)}"


async def _figures(request: Request, fetch) -> tuple[AnalyticsFigures, dict[str, str]]:
    """The range asked for, or (with its error beside the field) the default one."""
    asked = range_query(request)
    try:
        return await fetch(**asked), {}
    except ValidationError as exc:
        field = {"start": "from", "end": "to"}.get(exc.field, exc.field)
        return await fetch(), {field: exc.message}


def _page(request: Request, figures: AnalyticsFigures, errors: dict[str, str], **context) -> Response:
    query = request.query_params
    return page(
        request,
        "analytics.html",
        status_code=400 if errors else 200,
        figures=figures,
        breakdowns=breakdowns(figures),
        by_day=[(day.date, day.clicks) for day in figures.clicks_by_day],
        by_hour=[(hour.hour[11:16], hour.clicks) for hour in getattr(figures, "clicks_by_hour", [])],
        presets=PRESETS,
        days=query.get("days") or ("" if query.get("from") else str(DEFAULT_DAYS)),
        start=query.get("from", ""),
        end=query.get("to", ""),
        errors=errors,
        csv=csv_address(request),
        raw_clicks="/export/clicks?"
        + urlencode({k: v for k, v in request.query_params.items() if k in ("days", "from", "to")}),
        **context,
    )


class AnalyticsPages(SignedInController):
    @get("/analytics")
    async def account(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        async def fetch(**asked):
            return await services.analytics.of_account(session.account_id, **asked)

        figures, errors = await _figures(request, fetch)
        return _page(request, figures, errors, link=None)

    @get("/links/{link_id:str}/analytics")
    async def link(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        async def fetch(**asked):
            return await services.analytics.of_link(session.account_id, link_id, **asked)

        figures, errors = await _figures(request, fetch)
        link = await services.links.get(session.account_id, link_id)
        return _page(request, figures, errors, link=link)
