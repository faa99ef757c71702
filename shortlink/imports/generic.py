"""The generic CSV: header-named columns, in any order; the format `shortlink export` writes.

    url,code,title,description,tags,created_at,expires_at,ios_url,android_url,is_active,password_hash,source

Only `url` is required. JSON lines with the same keys (`shortlink export --format jsonl`)
are read too. `tags` holds names separated by `;`, each optionally followed by
its colour (`spring#ff8800;clients`). Times are ISO 8601 (UTC when no offset is given).
`is_active` is true or false (default true). `password_hash` is the protected links' hash as
an export of this service writes it (passwords themselves never travel); `source` is where
the link was first made (DASHBOARD, API, MCP, PUBLIC, BIO; empty for imports). A CSV cell
whose leading `'`s are followed by `=`, `+`, `-`, `@`, a tab or a carriage return loses its first
`'`: the export's guard against spreadsheet formulas (`shortlink.csvcells`).
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import cast, get_args

import msgspec

from shortlink.csvcells import unescape
from shortlink.imports.rows import (
    BadRow,
    FileError,
    ImportRow,
    csv_stream,
    decode,
    file_lines,
    first_of,
    iso_time,
    named,
)
from shortlink.links.schema import Source

COLUMNS = (
    "url",
    "code",
    "title",
    "description",
    "tags",
    "created_at",
    "expires_at",
    "ios_url",
    "android_url",
    "is_active",
    "password_hash",
    "source",
)
_COLOURED = re.compile(r"^(?P<name>.*?)(?P<colour>#[0-9a-fA-F]{6})$")
_TRUE, _FALSE = {"true", "1", "yes", ""}, {"false", "0", "no"}


def parse(data: bytes) -> list[ImportRow | BadRow]:
    return rows_of(io.StringIO(decode(data), newline=""))


def read(path: Path) -> list[ImportRow | BadRow]:
    """`parse` of a file read a line at a time: neither the file nor its records are ever
    held whole, only the rows made of them."""
    with path.open("rb") as file:
        return rows_of(file_lines(file))


def rows_of(lines: Iterable[str]) -> list[ImportRow | BadRow]:
    """The rows of the file's lines: JSON lines when the first non-blank one opens an object."""
    lines = iter(lines)
    skipped = 0
    for first in lines:
        if first.strip():
            break
        skipped += 1
    else:
        raise FileError("the file is empty")
    if first.lstrip().startswith("{"):
        return [_row(line, record) for line, record in json_records(itertools.chain([first], lines), skipped + 1)]
    header, records = csv_stream(itertools.chain([first], lines))
    if "url" not in header:
        raise FileError(f"no `url` column (the columns are {named(header)}); expected {', '.join(COLUMNS)}")
    return [_row(line + skipped, _unescaped(record)) for line, record in records]


def _unescaped(record: dict[str, str] | BadRow) -> dict[str, str] | BadRow:
    """Our export writes a text cell a spreadsheet would run as a formula with a `'` before it."""
    if isinstance(record, BadRow):
        return record
    return {key: unescape(value) for key, value in record.items()}


def _row(line: int, record: dict[str, str] | BadRow) -> ImportRow | BadRow:
    if isinstance(record, BadRow):
        return record
    url = first_of(record, "url")
    if url is None:
        return BadRow(line, "url is empty")
    try:
        tags, colours = split_tags(record.get("tags", ""))
        active = record.get("is_active", "").strip().lower()
        if active not in _TRUE | _FALSE:
            raise ValueError(f"is_active must be true or false (got {active!r})")
        created, expires = first_of(record, "created_at"), first_of(record, "expires_at")
        return ImportRow(
            line=line,
            url=url,
            code=first_of(record, "code"),
            title=first_of(record, "title"),
            description=first_of(record, "description"),
            tags=tags,
            colours=colours,
            created_at=iso_time("created_at", created) if created else None,
            expires_at=iso_time("expires_at", expires) if expires else None,
            ios_url=first_of(record, "ios_url"),
            android_url=first_of(record, "android_url"),
            is_active=active in _TRUE,
            password_hash=first_of(record, "password_hash"),
            source=_source(first_of(record, "source")),
        )
    except ValueError as exc:
        return BadRow(line, str(exc))


def _source(text: str | None) -> Source | None:
    if text is None:
        return None
    if text not in get_args(Source):
        raise ValueError(f"source must be one of {', '.join(get_args(Source))} (got {text!r})")
    return cast(Source, text)


def json_records(lines: Iterable[str], first_line: int = 1) -> Iterator[tuple[int, dict[str, str] | BadRow]]:
    """Each JSON line as {column: text}: values that are not text become text (true -> "true").
    A line that is JSON but not a record this reads is that row's error; one that is not JSON
    at all, the file's."""
    for line, content in enumerate(lines, start=first_line):
        if not content.strip():
            continue
        try:
            record = msgspec.json.decode(content)
        except msgspec.DecodeError as exc:
            raise FileError(f"line {line}: not JSON: {exc}") from None
        except RecursionError:
            yield line, BadRow(line, "nested too deep to read")
            continue
        if not isinstance(record, dict):
            yield line, BadRow(line, "not a JSON object")
            continue
        try:
            yield (
                line,
                {
                    key: value
                    if isinstance(value, str)
                    else ""
                    if value is None
                    else msgspec.json.encode(value).decode()
                    for key, value in record.items()
                },
            )
        except RecursionError:
            yield line, BadRow(line, "nested too deep to read")


def split_tags(cell: str) -> tuple[list[str], dict[str, str]]:
    """`a#ff8800;b` -> (["a", "b"], {"a": "#ff8800"})."""
    names, colours = [], {}
    for part in cell.split(";"):
        part = part.strip()
        if not part:
            continue
        coloured = _COLOURED.match(part)
        if coloured and coloured["name"].strip():
            part = coloured["name"].strip()
            colours[part] = coloured["colour"].lower()
        names.append(part)
    return names, colours


def join_tags(tags: list[tuple[str, str]]) -> str:
    return ";".join(f"{name}{colour}" for name, colour in tags)
