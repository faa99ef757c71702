"""Time in one format everywhere: aware UTC datetimes, ISO 8601 text ending in Z."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from msgspec import Meta

# The texts of to_iso and day_of as fields of API resources; Litestar copies
# extra_json_schema["extra"] into the OpenAPI document.
Timestamp = Annotated[str, Meta(extra_json_schema={"extra": {"format": "date-time"}})]
Day = Annotated[str, Meta(extra_json_schema={"extra": {"format": "date"}})]


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_iso(moment: datetime) -> str:
    """'2026-01-02T03:04:05.678Z': millisecond precision, sortable as text."""
    # isoformat, not strftime: much cheaper, and on every delivery's path (docs/benchmarks.md).
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").removesuffix("+00:00") + "Z"


def from_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def day_of(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d")
