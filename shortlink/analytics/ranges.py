"""The analytics range: `days`, `from` and `to` query values → an inclusive span of UTC milliseconds.

- `from` and `to` are either a date, YYYY-MM-DD, or an ISO 8601 date-time with a
  'T': YYYY-MM-DDThh:mm[:ss[.fraction]] with an optional `Z` or ±hh:mm offset
  (none means UTC). Nothing else: compact (20261103), week (2026-W45) or ordinal
  dates would be read as something the caller did not mean.
- `to`: default now; a date means the end of that UTC day (23:59:59.999).
- `from`: a date means 00:00 UTC of that day; when set, `days` is ignored.
- `days`: 1-366, default 30; the range starts `days` × 24 h before `to`. Ignored
  when `from` is set, as the spec says: not used and not checked.
- Both ends are included; the span (to − from) is at most 366 × 24 h; both ends
  lie between 1970-01-01 and 9999-12-31 (UTC).
- A reversed or longer range, or a bad value, is a ValidationError naming the parameter.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import NamedTuple

from shortlink.errors import ValidationError

DEFAULT_DAYS = 30
MAX_DAYS = 366
DAY_MS = 86_400_000
# [0-9], not \d: Python's \d and int() also take other scripts' digits.
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?"
)
_DAYS = re.compile(r"[0-9]{1,3}")
_FORMS = "YYYY-MM-DD or an ISO 8601 date-time such as 2026-11-03T14:30:00Z"


class Range(NamedTuple):
    start_ms: int  # first millisecond included
    end_ms: int  # last millisecond included


def to_ms(moment: datetime) -> int:
    # Exact integer arithmetic: float timestamps can be off by one millisecond.
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return delta.days * DAY_MS + delta.seconds * 1000 + delta.microseconds // 1000


LAST_MS = to_ms(datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC))


def _moment(name: str, text: str, end_of_day: bool) -> int:
    if _DATE.fullmatch(text):
        try:
            day = to_ms(datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC))
        except ValueError:
            raise ValidationError(name, f"{text!r} is not a calendar date") from None
        ms = day + DAY_MS - 1 if end_of_day else day
    elif _DATE_TIME.fullmatch(text):
        try:
            moment = datetime.fromisoformat(text)  # keeps microseconds, ignores further digits
        except ValueError:
            raise ValidationError(name, f"{text!r} is not a valid date-time") from None
        ms = to_ms(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    else:
        # An unencoded "+" in a query string arrives as a space.
        hint = " (send the + of an offset as %2B)" if " " in text else ""
        raise ValidationError(name, f"must be {_FORMS}{hint}")
    if not 0 <= ms <= LAST_MS:
        raise ValidationError(name, "is out of range: from 1970-01-01 to 9999-12-31 (UTC)")
    return ms


def parse_range(days: str | None, start: str | None, end: str | None, now: datetime) -> Range:
    """The range the query asks for; `start` and `end` are the `from` and `to` parameters."""
    end_ms = to_ms(now) if end is None else _moment("to", end, end_of_day=True)
    if start is None:
        count = DEFAULT_DAYS
        if days is not None:
            if not _DAYS.fullmatch(days) or not 1 <= int(days) <= MAX_DAYS:
                raise ValidationError("days", f"must be a whole number from 1 to {MAX_DAYS}")
            count = int(days)
        return Range(max(end_ms - count * DAY_MS, 0), end_ms)
    start_ms = _moment("from", start, end_of_day=False)
    if start_ms > end_ms:
        raise ValidationError("from", "must not be after to")
    if end_ms - start_ms > MAX_DAYS * DAY_MS:
        raise ValidationError("from", f"the range spans at most {MAX_DAYS} days")
    return Range(start_ms, end_ms)
