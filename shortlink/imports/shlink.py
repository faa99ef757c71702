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

import msgspec

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


def parse(data: bytes) -> list[ImportRow | BadRow]:
    text = decode(data)
    if not text.lstrip().startswith(("{", "[")):
        return _from_csv(text)
    try:
        document = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise FileError(f"not JSON: {exc}") from None
    visits: dict[str, Any] = {}
    if isinstance(document, dict):
        visits = document.get("visits") or {}
        short_urls = document.get("shortUrls")
        document = short_urls.get("data") if isinstance(short_urls, dict) else short_urls
    if not isinstance(document, list) or not isinstance(visits, dict):
        raise FileError("expected Shlink's short-URL JSON: an object with `shortUrls`, or a list of short URLs")
    return [_row(number, item, visits) for number, item in enumerate(document, start=1)]


def _row(number: int, item: Any, visits: dict[str, Any]) -> ImportRow | BadRow:
    if not isinstance(item, dict) or not item.get("longUrl"):
        return BadRow(number, "no longUrl")
    meta = item.get("meta") or {}
    devices = item.get("deviceLongUrls") or {}
    code = item.get("shortCode") or None
    try:
        return ImportRow(
            line=number,
            url=item["longUrl"],
            code=code,
            title=item.get("title") or None,
            tags=[tag for tag in item.get("tags") or [] if isinstance(tag, str)],
            created_at=iso_time("dateCreated", item["dateCreated"]) if item.get("dateCreated") else None,
            expires_at=iso_time("validUntil", meta["validUntil"]) if meta.get("validUntil") else None,
            ios_url=devices.get("ios") or None,
            android_url=devices.get("android") or None,
            visits=_visits(visits.get(code) if code else None),
        )
    except (ValueError, TypeError, KeyError) as exc:
        return BadRow(number, f"unreadable: {exc}")


def _visits(found: Any) -> list[ImportedVisit]:
    if isinstance(found, dict):  # the whole response body of the visits endpoint
        found = (found.get("visits") or {}).get("data")
    result = []
    for visit in found or []:
        location = visit.get("visitLocation") or {}
        result.append(
            ImportedVisit(
                ts_ms=epoch_ms("date", visit["date"]),
                user_agent=visit.get("userAgent") or "",
                referrer=visit.get("referer") or "",
                country=(location.get("countryCode") or "").upper()[:2],
                is_bot=bool(visit.get("potentialBot")),
            )
        )
    return sorted(result, key=lambda visit: visit.ts_ms)  # Shlink lists the newest first


# The web client's "Export" of the short-URL list (shlink-web-component,
# ExportShortUrlsBtn.tsx and ReportExporter.ts: `short_urls.csv`): one row per short URL with
# createdAt, domain, shortCode, shortUrl, longUrl, title, tags (joined by "|") and visits
# (a count only: the visits CSV it exports per short URL has no code and no user agent, so
# history travels with the REST API's JSON).
CSV_COLUMNS = ("createdat", "domain", "shortcode", "shorturl", "longurl", "title", "tags", "visits")


def _from_csv(text: str) -> list[ImportRow | BadRow]:
    header, records = csv_records(text)
    if "longurl" not in header:
        raise FileError(f"neither Shlink's JSON nor its CSV export: no longUrl column ({', '.join(header)})")
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
