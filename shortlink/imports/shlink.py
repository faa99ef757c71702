"""Shlink: its REST API's short-URL JSON, with each short URL's visits.

The body of `GET /rest/v3/short-urls` (`{"shortUrls": {"data": [...], "pagination": ...}}`),
or a list of short URLs, each with `shortCode`, `longUrl`, `dateCreated`, `tags`, `title`,
`meta.validUntil` and `deviceLongUrls`. Shlink serves visits per short URL
(`GET /rest/v3/short-urls/{shortCode}/visits`: `{"visits": {"data": [...]}}`); an export
that keeps them puts those bodies (or their `data` lists) beside `shortUrls`, under
`"visits": {"<shortCode>": ...}`. A visit has `date`, `userAgent`, `referer`,
`potentialBot` and `visitLocation.countryCode`.
"""

from __future__ import annotations

from typing import Any

from shortlink.imports.rows import (
    BadRow,
    FileError,
    ImportedClick,
    ImportRow,
    csv_records,
    decode,
    epoch_ms,
    first_of,
    iso_time,
    json_document,
    json_object,
    json_text,
    json_texts,
    named,
)


def parse(data: bytes) -> list[ImportRow | BadRow]:
    text = decode(data)
    if not text.lstrip().startswith(("{", "[")):
        return _from_csv(text)
    document = json_document(text)
    visits: dict[str, Any] = {}
    if isinstance(document, dict):
        visits = document.get("visits") or {}
        short_urls = document.get("shortUrls")
        document = short_urls.get("data") if isinstance(short_urls, dict) else short_urls
    if not isinstance(document, list) or not isinstance(visits, dict):
        raise FileError("expected Shlink's short-URL JSON: an object with `shortUrls`, or a list of short URLs")
    return [_row(number, item, visits) for number, item in enumerate(document, start=1)]


def _row(number: int, item: Any, visits: dict[str, Any]) -> ImportRow | BadRow:
    if not isinstance(item, dict):
        return BadRow(number, "not a short URL: expected an object")
    try:
        url = json_text(item, "longUrl")
        if url is None:
            return BadRow(number, "no longUrl")
        meta, devices = json_object(item, "meta"), json_object(item, "deviceLongUrls")
        code = json_text(item, "shortCode")
        created, until = json_text(item, "dateCreated"), json_text(meta, "validUntil")
        return ImportRow(
            line=number,
            url=url,
            code=code,
            title=json_text(item, "title"),
            tags=json_texts(item, "tags"),
            created_at=iso_time("dateCreated", created) if created else None,
            expires_at=iso_time("validUntil", until) if until else None,
            ios_url=json_text(devices, "ios"),
            android_url=json_text(devices, "android"),
            clicks=_visits(visits.get(code) if code else None),
        )
    except ValueError as exc:
        return BadRow(number, str(exc))


def _visits(found: Any) -> list[ImportedClick]:
    if isinstance(found, dict):  # the whole response body of the visits endpoint
        inner = found.get("visits")
        found = inner.get("data") if isinstance(inner, dict) else None
    if found is None:
        return []
    if not isinstance(found, list):
        raise ValueError("its visits must be a list")
    result = []
    for number, visit in enumerate(found, start=1):
        if not isinstance(visit, dict):
            raise ValueError(f"visit {number} is not an object")
        date = json_text(visit, "date")
        if date is None:
            raise ValueError(f"visit {number} has no date")
        location = json_object(visit, "visitLocation")
        result.append(
            ImportedClick(
                ts_ms=epoch_ms("date", date),
                user_agent=json_text(visit, "userAgent") or "",
                referrer=json_text(visit, "referer") or "",
                country=(json_text(location, "countryCode") or "").upper()[:2],
                is_bot=bool(visit.get("potentialBot")),
            )
        )
    return sorted(result, key=lambda click: click.ts_ms)  # Shlink lists the newest first


# The web client's "Export" of the short-URL list (shlink-web-component,
# ExportShortUrlsBtn.tsx and ReportExporter.ts: `short_urls.csv`): one row per short URL with
# createdAt, domain, shortCode, shortUrl, longUrl, title, tags (joined by "|") and visits
# (a count only: the visits CSV it exports per short URL has no code and no user agent, so
# history travels with the REST API's JSON).
CSV_COLUMNS = ("createdat", "domain", "shortcode", "shorturl", "longurl", "title", "tags", "visits")


def _from_csv(text: str) -> list[ImportRow | BadRow]:
    header, records = csv_records(text)
    if "longurl" not in header:
        raise FileError(f"neither Shlink's JSON nor its CSV export: no longUrl column ({named(header)})")
    rows: list[ImportRow | BadRow] = []
    for line, record in records:
        url = first_of(record, "longurl")
        if url is None:
            rows.append(BadRow(line, "longUrl is empty"))
            continue
        created = first_of(record, "createdat")
        try:
            rows.append(
                ImportRow(
                    line=line,
                    url=url,
                    code=first_of(record, "shortcode"),
                    title=first_of(record, "title"),
                    tags=[tag.strip() for tag in record.get("tags", "").split("|") if tag.strip()],
                    created_at=iso_time("createdAt", created) if created else None,
                )
            )
        except ValueError as exc:
            rows.append(BadRow(line, str(exc)))
    return rows
