"""Bitly: its v4 API's bitlinks JSON, or a CSV export of links.

JSON: the body of `GET /v4/groups/{group_guid}/bitlinks` (`{"links": [...], "pagination":
...}`), or a list of such bitlinks, each with `link`, `long_url`, `title`, `created_at`
(`2019-08-24T14:15:22+0000`), `tags`, `custom_bitlinks` and `archived`. CSV: columns matched
by name, as Bitly's exports name them in different versions ("Long URL", "Bitlink", "Custom
Bitlink", "Title", "Created", "Tags"...).

The code kept is the custom back-half when the link has one (it is the one people print:
Shlink's importer took the random one: shlinkio/shlink#2095), else the random one.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from shortlink.imports.rows import (
    BadRow,
    FileError,
    ImportRow,
    column_of,
    csv_records,
    decode,
    first_of,
    iso_time,
    json_document,
    json_text,
    json_texts,
)

URL_COLUMNS = ("long url", "long_url", "destination url", "destination", "original url")
LINK_COLUMNS = ("bitlink", "link", "short link", "short url", "short_url", "id")
CUSTOM_COLUMNS = ("custom bitlink", "custom bitlinks", "custom_bitlinks", "custom back-half", "custom backhalf")
CREATED_COLUMNS = ("created", "created_at", "date created", "creation date", "created date")


def parse(data: bytes) -> list[ImportRow | BadRow]:
    text = decode(data)
    if text.lstrip().startswith(("{", "[")):
        return _from_json(text)
    return _from_csv(text)


def code_of(link: str) -> str | None:
    """The back-half of a bitlink (`https://bit.ly/3xYz`, or `bit.ly/3xYz` as `id` has it)."""
    link = link.strip()
    if not link:
        return None
    path = urlsplit(link if "://" in link else f"https://{link}").path.strip("/")
    return path or None


def _from_json(text: str) -> list[ImportRow | BadRow]:
    document = json_document(text)
    links = document.get("links") if isinstance(document, dict) else document
    if not isinstance(links, list):
        raise FileError("expected Bitly's bitlinks JSON: an object with `links`, or a list of bitlinks")
    return [_json_row(number, link) for number, link in enumerate(links, start=1)]


def _json_row(number: int, link: Any) -> ImportRow | BadRow:
    if not isinstance(link, dict):
        return BadRow(number, "not a bitlink: expected an object")
    try:
        url = json_text(link, "long_url")
        if url is None:
            return BadRow(number, "no long_url")
        custom = [code_of(item) for item in json_texts(link, "custom_bitlinks")]
        created, expires = json_text(link, "created_at"), json_text(link, "expiration_at")
        return ImportRow(
            line=number,
            url=url,
            code=next((code for code in custom if code), None)
            or code_of(json_text(link, "link") or json_text(link, "id") or ""),
            title=json_text(link, "title"),
            tags=json_texts(link, "tags"),
            created_at=iso_time("created_at", created) if created else None,
            expires_at=iso_time("expiration_at", expires) if expires else None,
        )
    except ValueError as exc:  # urlsplit's too: a bitlink such as http://[bad
        return BadRow(number, str(exc))


def _from_csv(text: str) -> list[ImportRow | BadRow]:
    header, records = csv_records(text)
    if column_of(header, *URL_COLUMNS) is None:
        raise FileError(f"no long URL column: expected one of {', '.join(URL_COLUMNS)}")
    rows: list[ImportRow | BadRow] = []
    for line, record in records:
        url = first_of(record, *URL_COLUMNS)
        if url is None:
            rows.append(BadRow(line, "long URL is empty"))
            continue
        created = first_of(record, *CREATED_COLUMNS)
        try:
            rows.append(
                ImportRow(
                    line=line,
                    url=url,
                    code=code_of(first_of(record, *CUSTOM_COLUMNS) or first_of(record, *LINK_COLUMNS) or ""),
                    title=first_of(record, "title"),
                    tags=[tag.strip() for tag in re.split(r"[,;|]", record.get("tags", "")) if tag.strip()],
                    created_at=iso_time("created", created) if created else None,
                )
            )
        except ValueError as exc:
            rows.append(BadRow(line, str(exc)))
    return rows
