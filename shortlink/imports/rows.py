"""What every importer produces: rows to import, or bad rows with their line and reason."""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import msgspec

from shortlink.errors import ValidationError
from shortlink.links import validation
from shortlink.links.schema import Source
from shortlink.times import to_iso


class ImportedClick(msgspec.Struct, frozen=True):
    """A click the source recorded. `country` is ISO alpha-2 when the source knew it."""

    ts_ms: int
    user_agent: str = ""
    referrer: str = ""
    ip: str = ""
    country: str = ""
    is_bot: bool = False  # the source's own verdict; ours is added when the agent is known
    campaign: str = ""  # the short URL's utm_source, when the source kept it
    bot_final: bool = False  # is_bot is this service's own verdict (its export): kept as it is


class ImportedApp(msgspec.Struct, frozen=True, kw_only=True):
    """The app a source's link opened (Firebase Dynamic Links' apn, ibi, isi, link): the link
    opens the account's registered app with that package or bundle id, at `deep_path`."""

    android_package: str | None = None
    ios_bundle_id: str | None = None
    app_store_id: str | None = None
    deep_path: str = "/"


class ImportRow(msgspec.Struct, kw_only=True):
    """One link to import. `line` is where it starts in the file (1 for the first line), or
    its position in a JSON file's list (1 for the first item); `row`, for a statement of many
    rows (a dump's INSERT, often one line), its place in that statement (1 for the first)."""

    line: int
    row: int = 0
    url: str
    code: str | None = None
    title: str | None = None
    description: str | None = None
    tags: list[str] = []
    colours: dict[str, str] = {}  # tag name -> #rrggbb, when the source has colours
    created_at: str | None = None  # ISO 8601 UTC
    expires_at: str | None = None
    ios_url: str | None = None
    android_url: str | None = None
    is_active: bool = True
    password_hash: str | None = None  # only from this service's own export
    source: Source | None = None  # where the link was first made, from this service's own export
    clicks: list[ImportedClick] = []  # the source's history of the link, oldest first
    app: ImportedApp | None = None  # the app the link opened at the source (FDL)


class BadRow(msgspec.Struct, frozen=True):
    line: int
    reason: str
    row: int = 0  # as ImportRow.row


class FileError(ValueError):
    """The file as a whole cannot be read as the source's format: one line for the CLI."""


def decode(data: bytes) -> str:
    """The file's text: UTF-8 (a byte-order mark is dropped), else Windows-1252, which is
    what spreadsheets and MySQL's latin1 write (every byte decodes, so nothing is lost)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def decoded_line(raw: bytes) -> str:
    """One line of a file read a line at a time: UTF-8, else Windows-1252 (as `decode`)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def file_lines(file: Iterable[bytes]) -> Iterator[str]:
    """A binary file's lines as text, each decoded on its own, a byte-order mark dropped."""
    for number, raw in enumerate(file):
        yield decoded_line(raw[3:] if number == 0 and raw.startswith(codecs.BOM_UTF8) else raw)


def csv_records(text: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """`csv_stream` of a whole text, its records in a list."""
    header, records = csv_stream(io.StringIO(text, newline=""))
    return header, list(records)


def csv_stream(lines: Iterable[str]) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:
    """The header (lower-cased, trimmed) and each record as {column: value} with the line
    it starts on, read as they are asked for. Empty records are left out; `,`, `;` or a tab
    separates values."""
    lines = iter(lines)
    header_line = next(lines, "")
    # The delimiter is the one the header line uses most: values may hold the others
    # (a tags cell is `a;b`), and a header has no quoted text to mislead the count.
    delimiter = max(",;\t", key=header_line.count)
    reader = csv.reader(itertools.chain([header_line], lines), delimiter=delimiter)
    try:
        header = [name.strip().lower() for name in next(reader)]
    except StopIteration:
        raise FileError("the file is empty") from None
    except csv.Error as exc:
        raise FileError(f"not a CSV file: {exc}") from None
    return header, _records(reader, header)


def _records(reader: Any, header: list[str]) -> Iterator[tuple[int, dict[str, str]]]:
    line = reader.line_num + 1
    while True:
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise FileError(f"line {line}: {exc}") from None
        if any(value.strip() for value in values):
            yield line, dict(zip(header, values, strict=False))
        line = reader.line_num + 1


def named(header: list[str]) -> str:
    """A header's columns for an error message, kept short whatever the file's first line is."""
    shown = ", ".join(name[:40] for name in header[:12])
    return shown + (f" and {len(header) - 12} more" if len(header) > 12 else "")


def first_of(record: dict[str, str], *names: str) -> str | None:
    """The first non-blank value among these columns (a tool names a column several ways)."""
    for name in names:
        value = record.get(name, "").strip()
        if value:
            return value
    return None


def column_of(header: list[str], *names: str) -> str | None:
    return next((name for name in names if name in header), None)


_NAIVE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")


def iso_time(field: str, text: str) -> str:
    """A source's date-time as our ISO 8601 UTC text (see `moment`)."""
    return to_iso(moment(field, text))


# MySQL's DATETIME as dumps write it (YOURLS' click_time), one per click of a log: read as the
# day's and the time of day's milliseconds, each worked out once (a few thousand days, at
# most 86,400 times of day) rather than parsed again for every click.
_DATETIME = re.compile(r"\d{4}-\d\d-\d\d[ T]([01]\d|2[0-3]):[0-5]\d:[0-5]\d")
_DAY_MS: dict[str, int] = {}
_TIME_OF_DAY_MS: dict[str, int] = {}


def epoch_ms(field: str, text: str) -> int:
    """A source's date-time as Unix milliseconds, as clicks are stamped."""
    day_ms, time_ms = _DAY_MS.get(text[:10]), _TIME_OF_DAY_MS.get(text[11:])
    if day_ms is not None and time_ms is not None and len(text) == 19 and text[10] in " T":
        return day_ms + time_ms
    if len(text) == 19 and _DATETIME.fullmatch(text):
        try:
            day_ms = int(datetime.fromisoformat(text[:10]).replace(tzinfo=UTC).timestamp()) * 1000
        except ValueError:
            pass  # e.g. a 31st of February: `moment` says why
        else:
            _DAY_MS[text[:10]] = day_ms
            hours, minutes, seconds = text[11:].split(":")
            time_ms = _TIME_OF_DAY_MS[text[11:]] = (int(hours) * 3600 + int(minutes) * 60 + int(seconds)) * 1000
            return day_ms + time_ms
    return int(moment(field, text).timestamp() * 1000)


def moment(field: str, text: str) -> datetime:
    """A source's date-time in UTC. A time without offset (YOURLS and Kutt keep their
    server's) is read as UTC; a Unix time in seconds is accepted too, and Bitly's offsets
    without a colon (+0000)."""
    text = text.strip()
    if text.isdigit():
        try:
            return datetime.fromtimestamp(int(text[:20]), UTC)
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"{field} is no time: a Unix time beyond the year 9999 (got {text[:40]!r})") from None
    if _NAIVE.match(text):
        text = (text.replace(" ", "T") if "T" not in text and " " in text else text) + (
            "T00:00:00Z" if len(text) == 10 else "Z"
        )
    try:
        return validation.parse_time(field, text)
    except ValidationError as exc:
        raise ValueError(f"{exc.message} (got {text[:60]!r})") from None


def json_document(text: str) -> Any:
    """A whole JSON file, or the one clear error of the file."""
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise FileError(f"not JSON: {exc}") from None
    except RecursionError:
        raise FileError("not JSON this service reads: nested too deep") from None


def json_text(item: dict[str, Any], key: str) -> str | None:
    """A JSON object's text field: None when missing, null or empty; a ValueError (the row's
    error) when it is something else, a number or a list."""
    value = item.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key} must be text (got {_json_kind(value)})")
    return value


def json_texts(item: dict[str, Any], key: str) -> list[str]:
    """A JSON object's list of texts (tags): [] when missing or null, else a list of text."""
    value = item.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{key} must be a list of text (got {_json_kind(value)})")
    for entry in value:
        if not isinstance(entry, str):
            raise ValueError(f"{key} must be a list of text (one is {_json_kind(entry)})")
    return value


def json_object(item: dict[str, Any], key: str) -> dict[str, Any]:
    value = item.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{key} must be an object (got {_json_kind(value)})")
    return value


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "text"
