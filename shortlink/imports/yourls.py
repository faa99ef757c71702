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
    try:
        tables = _tables(text)
    except IndexError:
        raise FileError("the dump ends inside an INSERT statement") from None
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
    for match in _INSERT.finditer(text):
        table = match[1].lower()
        if match[2]:
            columns = [name.strip(" `") for name in match[2].split(",")]
        else:
            columns = declared.get(table) or (URL_COLUMNS if table.endswith("url") else LOG_COLUMNS)
        for position, values in _tuples(text, match.end()):
            line = text.count("\n", 0, position) + 1
            found[table].append((line, dict(zip(columns, values, strict=False))))
    return found


def _tuples(text: str, at: int) -> list[tuple[int, list[str]]]:
    """The `(v, ...), (v, ...)` after VALUES, up to the `;` that ends the statement: MySQL
    literals, strings with backslash escapes or doubled quotes, NULL as ""."""
    result: list[tuple[int, list[str]]] = []
    length = len(text)
    while at < length:
        while at < length and text[at] in " \t\r\n,":
            at += 1
        if at >= length or text[at] == ";":
            break
        if text[at] != "(":
            raise FileError(f"line {text.count(chr(10), 0, at) + 1}: unreadable VALUES")
        start, at = at, at + 1
        values: list[str] = []
        while True:
            while text[at] in " \t\r\n":
                at += 1
            if text[at] == "'":
                value, at = _string(text, at + 1)
            else:
                end = at
                while text[end] not in ",)":
                    end += 1
                value, at = text[at:end].strip(), end
                value = "" if value.upper() == "NULL" else value
            values.append(value)
            while text[at] in " \t\r\n":
                at += 1
            at += 1
            if text[at - 1] == ")":
                break
        result.append((start, values))
    return result


def _string(text: str, at: int) -> tuple[str, int]:
    parts = []
    while True:
        char = text[at]
        if char == "\\":
            parts.append(_ESCAPES.get(text[at + 1], text[at + 1]))
            at += 2
        elif char == "'" and text[at + 1 : at + 2] == "'":
            parts.append("'")
            at += 2
        elif char == "'":
            return "".join(parts), at + 1
        else:
            parts.append(char)
            at += 1
