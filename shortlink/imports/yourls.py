"""YOURLS: a MySQL dump of its `yourls_url` and `yourls_log` tables, or a CSV of `yourls_url`.

The tables (YOURLS' includes/functions-install.php), under any table prefix:
    yourls_url (keyword, url, title, timestamp, ip, clicks)
    yourls_log (click_id, click_time, shorturl, referrer, user_agent, ip_address, country_code)
A dump (mysqldump or phpMyAdmin) holds `INSERT INTO ... VALUES (...), (...);` statements;
their column order is the INSERT's column list, else the dump's CREATE TABLE, else the one
above. Each log row is a click of the keyword `shorturl`: the history travels with its
link (a CSV of `yourls_url` carries none). YOURLS writes "direct" for no referrer, and its
times in the server's time zone, read here as UTC.
"""

from __future__ import annotations

import io
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from pathlib import Path

from shortlink.imports.rows import (
    BadRow,
    FileError,
    ImportedClick,
    ImportRow,
    csv_records,
    decode,
    decoded_line,
    epoch_ms,
    file_lines,
    first_of,
    iso_time,
    named,
)

URL_COLUMNS = ["keyword", "url", "title", "timestamp", "ip", "clicks"]
LOG_COLUMNS = ["click_id", "click_time", "shorturl", "referrer", "user_agent", "ip_address", "country_code"]
# A dump is read a statement at a time, and each statement from its start: every pattern below
# is anchored (`match`, never `search`) and none can run past its own statement, so reading
# takes time in proportion to the dump whatever it holds (a search from every `INSERT INTO t (`
# of a hostile file to its end was quadratic).
_CREATE = re.compile(r"\s*CREATE TABLE\s+(?:IF NOT EXISTS\s+)?`?(\w+)`?\s*\(", re.IGNORECASE)
_INSERT = re.compile(r"\s*INSERT\s+(?:IGNORE\s+)?INTO\s+`?(\w+)`?\s*(?:\(([^();]*)\))?\s*VALUES\s*", re.IGNORECASE)
_COLUMN = re.compile(r"^[ \t]*`(\w+)`", re.MULTILINE)  # [ \t], not \s: \s would cross lines
_ESCAPES = {"0": "\0", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "b": "\b"}


def parse(data: bytes) -> list[ImportRow | BadRow]:
    text = decode(data)
    statements = list(_statements_of(io.StringIO(text, newline="\n")))
    if not any(_is_insert(statement) for _line, statement in statements):
        return _from_csv(text)
    urls = list(_rows_of(statements, "url", URL_COLUMNS))
    if not urls:
        raise FileError("no INSERT INTO yourls_url ... VALUES in the dump")
    clicks: dict[str, list[ImportedClick]] = defaultdict(list)
    for _line, _number, log in _rows_of(statements, "log", LOG_COLUMNS):
        try:
            clicks[log["shorturl"]].append(_click(log))
        except (KeyError, ValueError):
            continue  # a click without a readable time cannot be placed on a day
    return [_row(line, record, clicks, number) for line, number, record in urls]


def _row(
    line: int, record: dict[str, str], clicks: dict[str, list[ImportedClick]], number: int = 0
) -> ImportRow | BadRow:
    url = first_of(record, "url")
    if url is None:
        return BadRow(line, "url is empty", number)
    keyword = first_of(record, "keyword")
    stamp = first_of(record, "timestamp")
    try:
        return ImportRow(
            line=line,
            row=number,
            url=url,
            code=keyword,
            title=first_of(record, "title"),
            created_at=iso_time("timestamp", stamp) if stamp else None,
            clicks=sorted(clicks.get(keyword or "", []), key=lambda click: click.ts_ms),
        )
    except ValueError as exc:
        return BadRow(line, str(exc), number)


def _click(log: dict[str, str]) -> ImportedClick:
    referrer = log.get("referrer") or ""
    return ImportedClick(
        ts_ms=epoch_ms("click_time", log["click_time"]),
        user_agent=log.get("user_agent") or "",
        referrer="" if referrer == "direct" else referrer,
        ip=log.get("ip_address") or "",
        country=(log.get("country_code") or "").upper()[:2],
    )


def log_csv(text: str) -> dict[str, list[ImportedClick]]:
    """A CSV of `yourls_log` (phpMyAdmin's export, with or without its header line; or MySQL's
    `SELECT ... INTO OUTFILE`, tab-separated without one, NULL as \\N): keyword -> its clicks,
    oldest first. A click without a readable time is left out, as in a dump."""
    header_line = text.split("\n", 1)[0].lower()
    if "click_time" not in header_line:
        text = ",".join(LOG_COLUMNS) + "\n" + text if "\t" not in header_line else "\t".join(LOG_COLUMNS) + "\n" + text
    _header, records = csv_records(text)
    clicks: dict[str, list[ImportedClick]] = defaultdict(list)
    for _line, record in records:
        record = {name: "" if value == "\\N" else value for name, value in record.items()}
        try:
            clicks[record["shorturl"]].append(_click(record))
        except (KeyError, ValueError):
            continue
    for history in clicks.values():
        history.sort(key=lambda click: click.ts_ms)
    return clicks


def _from_csv(text: str) -> list[ImportRow | BadRow]:
    header, records = csv_records(text)
    if "url" not in header:
        raise FileError(f"neither a dump with INSERT INTO yourls_url nor a CSV with a `url` column ({named(header)})")
    return [_row(line, record, {}) for line, record in records]


def _tuples(text: str, at: int, width: int, first_line: int) -> tuple[list[tuple[int, list[str]]], int]:
    """The `(v, ...), (v, ...)` after VALUES, up to the `;` that ends the statement, and where
    they end: MySQL literals, strings with backslash escapes or doubled quotes, NULL as "". A
    regular expression per row of `width` values when every row has that many (a click log's
    millions of rows), else one per value: a loop per character took most of an import's time.
    Each match starts where the last ended, so the statement is read once (twice at most)."""
    if 0 < width <= MAX_ROW_PATTERN_WIDTH:
        rows = _rows_of_width(text, at, width)
        if rows is not None:
            return rows
    result: list[tuple[int, list[str]]] = []
    row: list[str] | None = None
    start = at
    while True:
        token = _TOKEN.match(text, at)
        if token is None:
            raise FileError(f"line {first_line + text.count(chr(10), 0, at)}: unreadable VALUES")
        at = token.end()
        kind = token.lastgroup
        if kind == "open" and row is None:
            row, start = [], token.start("open")
        elif kind == "close" and row is not None:
            result.append((start, row))
            row = None
        elif kind == "string" and row is not None:
            row.append(_UNESCAPE.sub(_unescaped, token["string"]))
        elif kind == "bare" and row is not None:
            row.append("" if token["bare"].upper() == "NULL" else token["bare"])
        elif kind == "end" and row is None:
            return result, at
        elif kind != "comma":
            raise FileError(f"line {first_line + text.count(chr(10), 0, at)}: unreadable VALUES")


_TOKEN = re.compile(
    r"\s*(?:(?P<open>\()|(?P<close>\))|(?P<comma>,)|'(?P<string>[^'\\]*(?:(?:\\.|'')[^'\\]*)*)'"
    r"|(?P<bare>[^,()'\s;]+)|(?P<end>;|$))",
    re.DOTALL,
)
_UNESCAPE = re.compile(r"\\(.)|''", re.DOTALL)
# One value of a row: a quoted string (group 1) or a bare literal (group 2).
_VALUE = r"\s*(?:'([^'\\]*(?:(?:\\.|'')[^'\\]*)*)'|([^,()'\s;]+))\s*"


# A pattern of a row of more values than a YOURLS table has columns is not worth compiling (a
# hostile column list of thousands would be): such rows take the general reader.
MAX_ROW_PATTERN_WIDTH = 32


@lru_cache(maxsize=8)
def _row_pattern(width: int) -> re.Pattern[str]:
    """A whole row of `width` values and what follows it (`,` another row, `;` or the end)."""
    return re.compile(r"\s*(\()" + ",".join([_VALUE] * width) + r"\)\s*([,;]|$)", re.DOTALL)


def _rows_of_width(text: str, at: int, width: int) -> tuple[list[tuple[int, list[str]]], int] | None:
    """`_tuples` with a match per row; None when a row is not `width` values (then the
    general reader reads the statement again)."""
    pattern = _row_pattern(width)
    result: list[tuple[int, list[str]]] = []
    while True:
        match = pattern.match(text, at)
        if match is None:
            return None
        groups = match.groups()
        row = []
        for index in range(1, 2 * width, 2):
            quoted = groups[index]
            if quoted is not None:
                row.append(_UNESCAPE.sub(_unescaped, quoted) if "\\" in quoted or "''" in quoted else quoted)
            else:
                bare = groups[index + 1]
                row.append("" if bare.upper() == "NULL" else bare)
        result.append((match.start(1), row))
        at = match.end()
        if groups[-1] != ",":
            return result, at


def _unescaped(match: re.Match[str]) -> str:
    escaped = match[1]
    return "'" if escaped is None else _ESCAPES.get(escaped, escaped)


# Streaming a dump too big to hold (100,000 links with 10 million clicks): statements are read
# one at a time from the file, links first, then the click log in a second pass, so neither the
# file nor its clicks are ever in memory at once.
_STATEMENT_START = re.compile(r"[ \t]*(INSERT\s|CREATE TABLE\s)", re.IGNORECASE)


def _statements(path: Path) -> Iterator[tuple[int, str]]:
    with path.open("rb") as file:
        yield from _statements_of(file_lines(file))


def _statements_of(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(first line, text) of each INSERT and CREATE TABLE statement of the dump, in order; one
    statement spans the lines up to the one that ends with `;` (phpMyAdmin writes a row a line)."""
    buffer: list[str] = []
    start = 0
    for number, line in enumerate(lines, start=1):
        if not buffer:
            if not _STATEMENT_START.match(line):
                continue
            start = number
        buffer.append(line)
        if line.rstrip().endswith(";"):
            yield start, "".join(buffer)
            buffer = []
    if buffer:
        yield start, "".join(buffer)


def _is_insert(statement: str) -> bool:
    return statement.lstrip()[:6].upper() == "INSERT"


def _rows_of(
    statements: Iterable[tuple[int, str]], table_suffix: str, default: list[str]
) -> Iterator[tuple[int, int, dict[str, str]]]:
    """(line, place in its INSERT, {column: value}) of every row inserted into the table ending
    with `table_suffix`: the line is the row's own, and its place tells apart the rows of a
    statement on one line (mysqldump writes a table's rows as one INSERT line)."""
    declared: list[str] | None = None
    for line, statement in statements:
        create = _CREATE.match(statement)
        if create is not None:
            if create[1].lower().endswith(table_suffix):
                declared = _COLUMN.findall(statement, create.end()) or None
            continue
        at = 0
        while (insert := _INSERT.match(statement, at)) is not None:  # statements on one line too
            columns = [name.strip().strip("`") for name in insert[2].split(",")] if insert[2] else (declared or default)
            rows, at = _tuples(statement, insert.end(), len(columns), line)
            if not insert[1].lower().endswith(table_suffix):
                continue
            counted, at_line = 0, line
            for number, (position, values) in enumerate(rows, start=1):
                at_line += statement.count("\n", counted, position)
                counted = position
                yield at_line, number, dict(zip(columns, values, strict=False))


def stream(path: Path) -> tuple[list[ImportRow | BadRow], Callable[[], Iterator[tuple[str, ImportedClick]]]]:
    """A dump's links (without history), and a way to read its click log afterwards, a
    statement at a time: (keyword, click), in file order."""
    rows = [_row(line, record, {}, number) for line, number, record in _rows_of(_statements(path), "url", URL_COLUMNS)]
    if not rows:
        raise FileError("no INSERT INTO yourls_url ... VALUES in the dump")

    def history() -> Iterator[tuple[str, ImportedClick]]:
        for _line, _number, log in _rows_of(_statements(path), "log", LOG_COLUMNS):
            try:
                yield log["shorturl"], _click(log)
            except (KeyError, ValueError):
                continue  # a click without a readable time cannot be placed on a day

    return rows, history


def is_dump(path: Path) -> bool:
    """Whether the file is a SQL dump (an INSERT within its first lines' statements)."""
    return any(True for _ in _statements_head(path))


def _statements_head(path: Path) -> Iterator[None]:
    with path.open("rb") as file:
        for number, raw in enumerate(file):
            if number > 10_000:
                return
            if _STATEMENT_START.match(decoded_line(raw)):
                yield None
                return
