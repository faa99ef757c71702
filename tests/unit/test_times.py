"""The one text form of a moment stored and answered everywhere: ISO 8601 in UTC, milliseconds."""

from datetime import UTC, datetime, timedelta, timezone

from shortlink.times import from_iso, to_iso


def test_moments_are_written_in_utc_to_the_millisecond_and_read_back():
    assert to_iso(datetime(2026, 1, 2, 3, 4, 5, 678999, tzinfo=UTC)) == "2026-01-02T03:04:05.678Z"
    assert to_iso(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05.000Z"
    five_hours_east = timezone(timedelta(hours=5))
    assert to_iso(datetime(2026, 1, 2, 3, 4, 5, 1000, tzinfo=five_hours_east)) == "2026-01-01T22:04:05.001Z"
    moment = datetime(2026, 11, 27, 16, 23, 30, 412000, tzinfo=UTC)
    assert from_iso(to_iso(moment)) == moment


def test_the_text_sorts_as_the_moments_do():
    moments = [
        datetime(year, 1, 1, tzinfo=UTC) + timedelta(milliseconds=step) for year in (999, 2026) for step in (0, 1, 999)
    ]
    assert sorted(map(to_iso, moments)) == list(map(to_iso, sorted(moments)))
