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

import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path

from shortlink.imports.rows import (
    BadRow,
    FileError,
    ImportedVisit,
    ImportRow,
    csv_records,
    decode,
    epoch_ms,
    first_of,
    iso_time,
)

URL_COLUMNS = ["keyword", "url", "title", "timestamp", "ip", "clicks"]
LOG_COLUMNS = ["click_id", "click_time", "shorturl", "referrer", "user_agent", "ip_address", "country_code"]
_CREATE = re.compile(r"CREATE TABLE\s+(?:IF NOT EXISTS\s+)?`?(\w+)`?\s*\((.*?)\n\)", re.IGNORECASE | re.DOTALL)
_INSERT = re.compile(r"INSERT\s+(?:IGNORE\s+)?INTO\s+`?(\w+)`?\s*(?:\(([^)]*)\))?\s*VALUES\s*", re.IGNORECASE)
_ESCAPES = {"0": "\0", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "b": "\b"}


def parse(data: bytes) -> list[ImportRow | BadRow]:
    text = decode(data)
    if _INSERT.search(text) is None:
        return _from_csv(text)
    tables = _tables(text)
    urls = next((rows for name, rows in tables.items() if name.endswith("url")), None)
    if urls is None:
        raise FileError("no INSERT INTO yourls_url in the dump")
    clicks: dict[str, list[ImportedVisit]] = defaultdict(list)
    for _line, log in next((rows for name, rows in tables.items() if name.endswith("log")), []):
        try:
            clicks[log["shorturl"]].append(_visit(log))
        except (KeyError, ValueError):
            continue  # a click without a readable time cannot be placed on a day
    return [_row(line, record, clicks) for line, record in urls]


def _row(line: int, record: dict[str, str], clicks: dict[str, list[ImportedVisit]]) -> ImportRow | BadRow:
    url = first_of(record, "url")
    if url is None:
        return BadRow(line, "url is empty")
    keyword = first_of(record, "keyword")
    stamp = first_of(record, "timestamp")
    try:
        return ImportRow(
            line=line,
            url=url,
            code=keyword,
            title=first_of(record, "title"),
            created_at=iso_time("timestamp", stamp) if stamp else None,
            visits=sorted(clicks.get(keyword or "", []), key=lambda visit: visit.ts_ms),
        )
    except ValueError as exc:
        return BadRow(line, str(exc))


def _visit(log: dict[str, str]) -> ImportedVisit:
    referrer = log.get("referrer") or ""
    return ImportedVisit(
        ts_ms=epoch_ms("click_time", log["click_time"]),
        user_agent=log.get("user_agent") or "",
        referrer="" if referrer == "direct" else referrer,
        ip=log.get("ip_address") or "",
        country=(log.get("country_code") or "").upper()[:2],
    )


def log_csv(text: str) -> dict[str, list[ImportedVisit]]:
    """A CSV of `yourls_log` (phpMyAdmin's export, with or without its header line; or MySQL's
    `SELECT ... INTO OUTFILE`, tab-separated without one, NULL as \\N): keyword -> its clicks,
    oldest first. A click without a readable time is left out, as in a dump."""
    header_line = text.split("\n", 1)[0].lower()
    if "click_time" not in header_line:
        text = ",".join(LOG_COLUMNS) + "\n" + text if "\t" not in header_line else "\t".join(LOG_COLUMNS) + "\n" + text
    _header, records = csv_records(text)
    clicks: dict[str, list[ImportedVisit]] = defaultdict(list)
    for _line, record in records:
        record = {name: "" if value == "\\N" else value for name, value in record.items()}
        try:
            clicks[record["shorturl"]].append(_visit(record))
        except (KeyError, ValueError):
            continue
    for visits in clicks.values():
        visits.sort(key=lambda visit: visit.ts_ms)
    return clicks


def _from_csv(text: str) -> list[ImportRow | BadRow]:
    header, records = csv_records(text)
    if "url" not in header:
        raise FileError(
            f"neither a dump with INSERT INTO yourls_url nor a CSV with a `url` column ({', '.join(header)})"
        )
    return [_row(line, record, {}) for line, record in records]


def _tables(text: str) -> dict[str, list[tuple[int, dict[str, str]]]]:
    """Every INSERT's rows, by table: (line of the row, {column: value})."""
    declared = {name.lower(): re.findall(r"^\s*`(\w+)`", body, re.MULTILINE) for name, body in _CREATE.findall(text)}
    found: dict[str, list[tuple[int, dict[str, str]]]] = defaultdict(list)
    # Lines counted onwards from the previous row (rows come in file order): counting from
    # the start for each row was quadratic on a dump's long INSERT lines.
    line, counted_to = 1, 0
    for match in _INSERT.finditer(text):
        table = match[1].lower()
        if match[2]:
            columns = [name.strip().strip("`") for name in match[2].split(",")]
        else:
            columns = declared.get(table) or (URL_COLUMNS if table.endswith("url") else LOG_COLUMNS)
        for position, values in _tuples(text, match.end(), len(columns)):
            line += text.count("\n", counted_to, position)
            counted_to = position
            found[table].append((line, dict(zip(columns, values, strict=False))))
    return found


def _tuples(text: str, at: int, width: int = 0) -> list[tuple[int, list[str]]]:
    """The `(v, ...), (v, ...)` after VALUES, up to the `;` that ends the statement: MySQL
    literals, strings with backslash escapes or doubled quotes, NULL as "". A regular
    expression per row of `width` values when every row has that many (a click log's
    millions of rows), else one per value: a loop per character took most of an import's time."""
    if width:
        rows = _rows_of_width(text, at, width)
        if rows is not None:
            return rows
    result: list[tuple[int, list[str]]] = []
    row: list[str] | None = None
    start = at
    while True:
        token = _TOKEN.match(text, at)
        if token is None:
            raise FileError(f"line {text.count(chr(10), 0, at) + 1}: unreadable VALUES")
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
            return result
        elif kind != "comma":
            raise FileError(f"line {text.count(chr(10), 0, at) + 1}: unreadable VALUES")


_TOKEN = re.compile(
    r"\s*(?:(?P<open>\()|(?P<close>\))|(?P<comma>,)|'(?P<string>[^'\\]*(?:(?:\\.|'')[^'\\]*)*)'"
    r"|(?P<bare>[^,()'\s;]+)|(?P<end>;|$))",
    re.DOTALL,
)
_UNESCAPE = re.compile(r"\\(.)|''", re.DOTALL)
# One value of a row: a quoted string (group 1) or a bare literal (group 2).
_VALUE = r"\s*(?:'([^'\\]*(?:(?:\\.|'')[^'\\]*)*)'|([^,()'\s;]+))\s*"


@lru_cache(maxsize=8)
def _row_pattern(width: int) -> re.Pattern[str]:
    """A whole row of `width` values and what follows it (`,` another row, `;` or the end)."""
    return re.compile(r"\s*(\()" + ",".join([_VALUE] * width) + r"\)\s*([,;]|$)", re.DOTALL)


def _rows_of_width(text: str, at: int, width: int) -> list[tuple[int, list[str]]] | None:
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
        if groups[-1] != ",":
            return result
        at = match.end()


def _unescaped(match: re.Match[str]) -> str:
    escaped = match[1]
    return "'" if escaped is None else _ESCAPES.get(escaped, escaped)


# Streaming a dump too big to hold (issue 37: 100,000 links with 10 million clicks): statements
# are read one at a time from the file, links first, then the click log in a second pass, so
# neither the file nor its clicks are ever in memory at once.
_STATEMENT_START = re.compile(r"^\s*(INSERT\s|CREATE TABLE\s)", re.IGNORECASE)


def _statements(path: Path) -> Iterator[tuple[int, str]]:
    """(first line, text) of each INSERT and CREATE TABLE statement of the dump, in order; one
    statement spans the lines up to the one that ends with `;` (phpMyAdmin writes a row a line)."""
    buffer: list[str] = []
    start = 0
    with path.open("rb") as file:
        for number, raw in enumerate(file, start=1):
            line = _decoded(raw)
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


def _decoded(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def _insert_rows(path: Path, table_suffix: str, default: list[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, {column: value}) of every row inserted into the table ending with `table_suffix`."""
    declared: list[str] | None = None
    for line, statement in _statements(path):
        create = _CREATE.match(statement.strip() + "\n")
        if create is not None:
            if create[1].lower().endswith(table_suffix):
                declared = re.findall(r"^\s*`(\w+)`", create[2], re.MULTILINE) or None
            continue
        insert = _INSERT.search(statement)
        if insert is None or not insert[1].lower().endswith(table_suffix):
            continue
        columns = [name.strip().strip("`") for name in insert[2].split(",")] if insert[2] else (declared or default)
        counted, at_line = 0, line
        for position, values in _tuples(statement, insert.end(), len(columns)):
            at_line += statement.count("\n", counted, position)
            counted = position
            yield at_line, dict(zip(columns, values, strict=False))


def stream(path: Path) -> tuple[list[ImportRow | BadRow], Callable[[], Iterator[tuple[str, ImportedVisit]]]]:
    """A dump's links (without history), and a way to read its click log afterwards, a
    statement at a time: (keyword, click), in file order."""
    rows = [_row(line, record, {}) for line, record in _insert_rows(path, "url", URL_COLUMNS)]
    if not rows:
        raise FileError("no INSERT INTO yourls_url in the dump")

    def history() -> Iterator[tuple[str, ImportedVisit]]:
        for _line, log in _insert_rows(path, "log", LOG_COLUMNS):
            try:
                yield log["shorturl"], _visit(log)
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
            if _STATEMENT_START.match(_decoded(raw)):
                yield None
                return
