"""Analytics for every door: the API's range rules, answered on a reader."""

from __future__ import annotations

from collections.abc import Collection

from shortlink.analytics.csvexport import analytics_csv
from shortlink.analytics.ranges import DEFAULT_DAYS, parse_range
from shortlink.analytics.report import AccountAnalytics, LinkAnalytics, account_analytics, link_analytics
from shortlink.storage import Database
from shortlink.times import utcnow


class Analytics:
    def __init__(self, *, db: Database):
        self.db = db

    async def of_link(
        self,
        account_id: int,
        link_id: str,
        days: str = str(DEFAULT_DAYS),
        start: str | None = None,
        end: str | None = None,
    ) -> LinkAnalytics:
        """`days`, `start` (the API's `from`) and `end` (`to`) as the API receives them."""
        now = utcnow()
        return await self.db.read(link_analytics, account_id, link_id, parse_range(days, start, end, now), now)

    async def of_account(
        self, account_id: int, days: str = str(DEFAULT_DAYS), start: str | None = None, end: str | None = None
    ) -> AccountAnalytics:
        now = utcnow()
        return await self.db.read(account_analytics, account_id, parse_range(days, start, end, now), now)

    async def link_csv(
        self,
        account_id: int,
        link_id: str,
        days: str = str(DEFAULT_DAYS),
        start: str | None = None,
        end: str | None = None,
        sections: Collection[str] | None = None,
    ) -> str:
        """`of_link` as CSV (analytics.csvexport): every section, or only `sections`."""
        return analytics_csv(await self.of_link(account_id, link_id, days, start, end), sections)

    async def account_csv(
        self,
        account_id: int,
        days: str = str(DEFAULT_DAYS),
        start: str | None = None,
        end: str | None = None,
        sections: Collection[str] | None = None,
    ) -> str:
        """`of_account` as CSV, as `link_csv`."""
        return analytics_csv(await self.of_account(account_id, days, start, end), sections)
