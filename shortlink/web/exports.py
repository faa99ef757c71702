"""GET /analytics/clicks (an extension): the account's raw clicks of a range as JSON
lines, streamed a page per read, so a million rows never sit in memory."""

from __future__ import annotations

from litestar import Controller, get
from litestar.di import NamedDependency
from litestar.response import Stream

from shortlink.accounts.schema import Principal
from shortlink.web.analytics import From, To
from shortlink.web.openapi import error_responses
from shortlink.wiring import Services

JSON_LINES = "application/jsonl"


class ExportController(Controller):
    @get(
        "/analytics/clicks",
        media_type=JSON_LINES,
        responses=error_responses(),
        summary=(
            "Raw clicks of a range as JSON lines (extension): code, time, device, browser, os, country, referrer, "
            "campaign, user_agent, a per-day visitor number (no IP, no hash), is_bot; oldest first, streamed"
        ),
    )
    async def raw_clicks(
        self,
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
        start: From = None,
        end: To = None,
    ) -> Stream:
        pages = await services.imports.export_clicks(principal.account_id, start, end)
        return Stream(
            pages,
            media_type=JSON_LINES,
            headers={"Content-Disposition": 'attachment; filename="clicks.jsonl"', "Cache-Control": "no-store"},
        )
