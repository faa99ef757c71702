"""parse_range: the documented rules for days / from / to."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shortlink.analytics.ranges import DAY_MS, Range, parse_range, to_ms
from shortlink.errors import ValidationError

NOW = datetime(2026, 3, 15, 13, 45, 30, 250_000, tzinfo=UTC)
NOW_MS = to_ms(NOW)


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp() * 1000)


@pytest.mark.parametrize(
    ("days", "start", "end", "want"),
    [
        (None, None, None, Range(NOW_MS - 30 * DAY_MS, NOW_MS)),
        ("1", None, None, Range(NOW_MS - DAY_MS, NOW_MS)),
        ("366", None, None, Range(NOW_MS - 366 * DAY_MS, NOW_MS)),
        ("007", None, None, Range(NOW_MS - 7 * DAY_MS, NOW_MS)),
        ("366", "2026-03-01", None, Range(ms("2026-03-01T00:00:00+00:00"), NOW_MS)),  # from overrides days
        ("abc", "2026-03-01", None, Range(ms("2026-03-01T00:00:00+00:00"), NOW_MS)),  # ... and days is ignored
        ("0", "2026-03-01", None, Range(ms("2026-03-01T00:00:00+00:00"), NOW_MS)),
        (None, "2026-03-01", "2026-03-02", Range(ms("2026-03-01T00:00:00+00:00"), ms("2026-03-03T00:00:00+00:00") - 1)),
        (
            None,
            "2026-03-01T10:00:00+02:00",
            "2026-03-01T09:00:00Z",
            Range(ms("2026-03-01T08:00:00+00:00"), ms("2026-03-01T09:00:00+00:00")),
        ),
        (None, "2026-03-01T10:00:00", None, Range(ms("2026-03-01T10:00:00+00:00"), NOW_MS)),  # naive = UTC
        (
            None,
            "2026-03-01T10:00",
            "2026-03-01T10:30Z",
            Range(ms("2026-03-01T10:00:00+00:00"), ms("2026-03-01T10:30:00+00:00")),
        ),  # no seconds
        (
            None,
            None,
            "2026-03-01T10:00:00.123456789-01:00",
            Range(ms("2026-03-01T11:00:00.123+00:00") - 30 * DAY_MS, ms("2026-03-01T11:00:00.123+00:00")),
        ),
        # The last representable day is a whole day like any other.
        (None, "9999-12-31", "9999-12-31", Range(ms("9999-12-31T00:00:00+00:00"), ms("9999-12-31T23:59:59.999+00:00"))),
        (None, "1970-01-01", "1970-01-01T00:00:00Z", Range(0, 0)),
        (
            "2",
            None,
            "2026-03-10",
            Range(ms("2026-03-11T00:00:00+00:00") - 1 - 2 * DAY_MS, ms("2026-03-11T00:00:00+00:00") - 1),
        ),
        (
            None,
            "2025-03-16",
            "2026-03-15",
            Range(ms("2025-03-16T00:00:00+00:00"), ms("2026-03-16T00:00:00+00:00") - 1),
        ),  # 365 days: fine
        (
            None,
            "2024-01-01",
            "2024-12-31",
            Range(ms("2024-01-01T00:00:00+00:00"), ms("2025-01-01T00:00:00+00:00") - 1),
        ),  # leap year: 366 days
        (
            None,
            "2026-03-01T05:00:00Z",
            "2026-03-01T05:00:00Z",
            Range(ms("2026-03-01T05:00:00+00:00"), ms("2026-03-01T05:00:00+00:00")),
        ),
    ],
)
def test_valid_ranges(days, start, end, want):
    assert parse_range(days, start, end, NOW) == want


@pytest.mark.parametrize(
    ("days", "start", "end", "named"),
    [
        ("0", None, None, "days"),
        ("367", None, None, "days"),
        ("-1", None, None, "days"),
        ("1e2", None, None, "days"),
        ("", None, None, "days"),
        ("ten", None, None, "days"),
        ("7.0", None, None, "days"),
        (" 7 ", None, None, "days"),
        ("+7", None, None, "days"),
        ("７", None, None, "days"),  # fullwidth digit
        (None, "2026-02-30", None, "from"),
        (None, "soon", None, "from"),
        (None, None, "2026-3-1", "to"),
        # Other ISO 8601 forms than YYYY-MM-DD and date-times with a T are refused, not misread.
        (None, None, "20260301", "to"),
        (None, None, "2026-W09", "to"),
        (None, None, "2026-W09-7", "to"),
        (None, None, "2026-060", "to"),
        (None, None, "2026-03", "to"),
        (None, None, "2026-03-01 10:00:00", "to"),
        (None, None, "20260301T100000Z", "to"),
        (None, None, "2026-03-01T10", "to"),
        (None, None, "2026-03-01T10:00:00+0100", "to"),
        (None, None, "2026-03-01T10:00:00+01", "to"),
        (None, None, "2026-03-01t10:00:00z", "to"),
        (None, None, " 2026-03-01", "to"),
        (None, None, "2026-03-01T24:00:00", "to"),
        (None, "2026-03-01T10:00:00+24:00", None, "from"),
        (None, "2026-03-02", "2026-03-01", "from"),  # reversed
        (None, "2024-01-01", "2025-01-01", "from"),  # 367 days
        (None, "2026-03-01T00:00:00Z", "2026-03-01T00:00:00+01:00", "from"),  # reversed by the offset
        (None, "1969-12-31", None, "from"),
        (None, None, "9999-12-31T23:59:59-01:00", "to"),
    ],
)
def test_invalid_ranges_name_the_parameter(days, start, end, named):
    with pytest.raises(ValidationError) as error:
        parse_range(days, start, end, NOW)
    assert error.value.field == named


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("1969-12-31", None, "from: is out of range: from 1970-01-01 to 9999-12-31 (UTC)"),
        ("1970-01-01T00:30:00+01:00", None, "from: is out of range: from 1970-01-01 to 9999-12-31 (UTC)"),
        (None, "9999-12-31T23:59:59-01:00", "to: is out of range: from 1970-01-01 to 9999-12-31 (UTC)"),
        (None, "2026-02-30", "to: '2026-02-30' is not a calendar date"),
        (None, "2026-W09", "to: must be YYYY-MM-DD or an ISO 8601 date-time such as 2026-11-03T14:30:00Z"),
        # A "+" typed into a URL arrives as a space.
        (
            None,
            "2026-03-01T10:00:00 01:00",
            "to: must be YYYY-MM-DD or an ISO 8601 date-time such as "
            "2026-11-03T14:30:00Z (send the + of an offset as %2B)",
        ),
    ],
)
def test_messages_say_what_is_wrong(start, end, message):
    with pytest.raises(ValidationError) as error:
        parse_range(None, start, end, NOW)
    assert error.value.message == message


dates = st.dates(min_value=date(1971, 1, 1), max_value=date(2100, 1, 1))


@given(first=dates, last=dates)
def test_date_only_ranges_cover_whole_utc_days_or_are_rejected(first, last):
    days = (last - first).days + 1
    if 1 <= days <= 366:
        span = parse_range(None, first.isoformat(), last.isoformat(), NOW)
        assert span.start_ms % DAY_MS == 0 and (span.end_ms + 1) % DAY_MS == 0
        assert (span.end_ms + 1 - span.start_ms) // DAY_MS == days
    else:
        with pytest.raises(ValidationError) as error:
            parse_range(None, first.isoformat(), last.isoformat(), NOW)
        assert error.value.field == "from"


@given(
    days=st.integers(1, 366),
    moment=st.datetimes(min_value=datetime(1972, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)),
)
def test_days_count_back_from_to(days, moment):
    text = moment.isoformat()
    span = parse_range(str(days), None, text, NOW)
    assert span.end_ms == to_ms(moment) and span.end_ms - span.start_ms == days * DAY_MS


@given(
    offset_minutes=st.integers(-14 * 60, 14 * 60),
    moment=st.datetimes(min_value=datetime(1972, 1, 1), max_value=datetime(2100, 1, 1)),
)
def test_offsets_name_the_same_instant(offset_minutes, moment):
    zone = timezone(timedelta(minutes=offset_minutes))
    local = moment.replace(tzinfo=zone)
    assert parse_range("1", None, local.isoformat(), NOW).end_ms == to_ms(local)
