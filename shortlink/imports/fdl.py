"""Firebase Dynamic Links (shut down on 25 August 2025): short links with their long links.

A CSV with a short-link column ("short link", "shortLink", "short_link") and a long-link
column ("long link", "longDynamicLink", "long_dynamic_link"), or JSON: a list of objects
with `shortLink` and `longDynamicLink`, as `shortLinks.create` took and answered them.

A long Dynamic Link is `https://example.page.link/?link=DEEP&apn=...&afl=...&ifl=...&ofl=...`
(Firebase's "Manually constructing a Dynamic Link URL"). Kept: `ofl` (else `link`) as the
destination, `afl` as the Android and `ifl` as the iOS destination, `st` and `sd` as title
and description, and the `utm_*` campaign parameters, added to the destination's query
where it has none of its own. The app (`apn`, `ibi`, `isi`, `ipbi`) and the deep link `link`
become the link's app: it opens the account's app registered with that package or
bundle id (`shortlink app add`) at the path and query of `link`. Not carried: `amv`/`imv`
(minimum versions: the store has the latest), `efr` (no preview page to skip here), `si`
(social image), `ius` (custom scheme: universal links replace it), `ipfl` (iPads take `ifl`),
and the iTunes Connect analytics `at`, `ct`, `mt`, `pt`.

Besides files, pasted text: one long Dynamic Link per line (the short path then is the code
when the line is `SHORT LONG`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from shortlink.imports.rows import (
    BadRow,
    FileError,
    ImportedApp,
    ImportRow,
    column_of,
    csv_records,
    decode,
    first_of,
    json_document,
)

SHORT_COLUMNS = ("short link", "shortlink", "short_link", "short url", "short_url")
LONG_COLUMNS = ("long link", "longdynamiclink", "long_dynamic_link", "long url", "long_url", "dynamic link")
CAMPAIGN = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")


def parse(data: bytes) -> list[ImportRow | BadRow]:
    text = decode(data)
    if text.lstrip().startswith("["):
        items = json_document(text)
        if not isinstance(items, list):
            raise FileError("expected a JSON list of objects with shortLink and longDynamicLink")
        pairs = [
            (number, _text(item, "shortLink"), _text(item, "longDynamicLink"))
            for number, item in enumerate(items, start=1)
        ]
    elif text.lstrip().startswith("http") and "," not in text.strip().splitlines()[0]:
        # Pasted: one long link per line, or "SHORT LONG" per line.
        pairs = []
        for number, line in enumerate(text.splitlines(), start=1):
            words = line.split()
            if words:
                pairs.append((number, words[0] if len(words) > 1 else None, words[-1]))
    else:
        header, records = csv_records(text)
        if column_of(header, *LONG_COLUMNS) is None:
            raise FileError(f"no long link column: expected one of {', '.join(LONG_COLUMNS)}")
        pairs = [(line, first_of(r, *SHORT_COLUMNS), first_of(r, *LONG_COLUMNS)) for line, r in records]
    return [_row(line, short, long) for line, short, long in pairs]


def _text(item: Any, key: str) -> str | None:
    value = item.get(key) if isinstance(item, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def _row(line: int, short: str | None, long: str | None) -> ImportRow | BadRow:
    try:
        return _link(line, short, long)
    except ValueError as exc:  # urlsplit's: a link such as http://[bad
        return BadRow(line, f"unreadable link: {exc}")


def _link(line: int, short: str | None, long: str | None) -> ImportRow | BadRow:
    if long is None:
        return BadRow(line, "no long Dynamic Link")
    query = {name: values[0] for name, values in parse_qs(urlsplit(long).query).items()}
    destination = query.get("ofl") or query.get("link")
    if destination is None:
        return BadRow(line, "the long Dynamic Link has neither `link` nor `ofl`")
    code = urlsplit(short).path.strip("/") if short else None
    return ImportRow(
        line=line,
        url=with_campaign(destination, query),
        code=code or None,
        title=query.get("st"),
        description=query.get("sd"),
        android_url=query.get("afl"),
        ios_url=query.get("ifl"),
        app=_app(query),
    )


def _app(query: dict[str, str]) -> ImportedApp | None:
    package, bundle = query.get("apn"), query.get("ibi") or query.get("ipbi")
    if package is None and bundle is None:
        return None
    deep = urlsplit(query.get("link", ""))
    deep_path = (deep.path or "/") + (f"?{deep.query}" if deep.query else "")
    return ImportedApp(
        android_package=package, ios_bundle_id=bundle, app_store_id=query.get("isi"), deep_path=deep_path
    )


def with_campaign(url: str, query: dict[str, str]) -> str:
    """`url` with the Dynamic Link's utm_* parameters, where it has none of its own."""
    parts = urlsplit(url)
    if any(name in parse_qs(parts.query) for name in CAMPAIGN):
        return url
    campaign = urlencode([(name, query[name]) for name in CAMPAIGN if name in query])
    if not campaign:
        return url
    return urlunsplit(parts._replace(query=f"{parts.query}&{campaign}" if parts.query else campaign))
