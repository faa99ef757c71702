"""The analytics range: `days`, `from` and `to` query values → an inclusive span of UTC milliseconds.

- `to`: default now; a date-only value means the end of that UTC day (23:59:59.999).
- `from`: a date-only value means 00:00 UTC of that day; when set, `days` is ignored.
- `days`: 1-366, default 30; without `from`, the range starts `days` × 24 h before `to`.
- Both ends are included; the span (to − from) is at most 366 × 24 h.
- Date-times without an offset are UTC. The span is at most 366 days; a reversed
  or longer range, or an unparsable value, is a ValidationError naming the parameter.
"""
from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from shortlink.errors import ValidationError

DEFAULT_DAYS = 30
MAX_DAYS = 366
DAY_MS = 86_400_000
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_DAYS = re.compile(r"\d{1,3}")


class Range(NamedTuple):
    start_ms: int     # first millisecond included
    end_ms: int       # last millisecond included


def _moment(name: str, text: str, end_of_day: bool) -> int:
    value = text.strip()
    try:
        if _DATE_ONLY.fullmatch(value):
            day = datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=UTC)
            return to_ms(day + timedelta(days=1)) - 1 if end_of_day else to_ms(day)
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return to_ms(moment)
    except (ValueError, OverflowError):
        raise ValidationError(name, "must be an ISO 8601 date (YYYY-MM-DD) or date-time") from None


def to_ms(moment: datetime) -> int:
    # Exact integer arithmetic: float timestamps can be off by one millisecond.
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return delta.days * DAY_MS + delta.seconds * 1000 + delta.microseconds // 1000


def parse_range(days: str | None, start: str | None, end: str | None, now: datetime) -> Range:
    """The range the query asks for; `start` and `end` are the `from` and `to` parameters."""
    end_ms = to_ms(now) if end is None else _moment("to", end, end_of_day=True)
    if end_ms < 0:
        raise ValidationError("to", "must not be before 1970")
    if start is not None:
        start_ms = _moment("from", start, end_of_day=False)
        if start_ms < 0:
            raise ValidationError("from", "must not be before 1970")
        if start_ms > end_ms:
            raise ValidationError("from", "must not be after to")
        if end_ms - start_ms > MAX_DAYS * DAY_MS:
            raise ValidationError("from", f"the range spans at most {MAX_DAYS} days")
        return Range(start_ms, end_ms)
    count = DEFAULT_DAYS
    if days is not None:
        if not _DAYS.fullmatch(days.strip()) or not 1 <= int(days) <= MAX_DAYS:
            raise ValidationError("days", f"must be a whole number from 1 to {MAX_DAYS}")
        count = int(days)
    return Range(max(end_ms - count * DAY_MS, 0), end_ms)
