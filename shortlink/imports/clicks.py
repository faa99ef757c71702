"""History for the links of an import, from a second file (`shortlink import SOURCE FILE --clicks CLICKS`):
the raw clicks this service exports (`shortlink export --clicks`, shortlink.analytics.rawclicks),
read back as history for the links of a generic import (`shortlink import csv FILE --clicks CLICKS`).

Each JSON line becomes an ImportedClick of its `code`: the time to the millisecond, the user
agent (device, browser and system are worked out from it again, as for a visit), the referring
host, the campaign, the country, our own bot verdict as it was, and the day's `visitor`
number standing in for the address, so that unique visitors count the same again.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

import msgspec

from shortlink.imports import yourls
from shortlink.imports.rows import BadRow, FileError, ImportedClick, ImportRow, decode


class _Line(msgspec.Struct):
    code: str
    time: str
    user_agent: str = ""
    referrer: str = ""
    campaign: str = ""
    country: str = ""
    visitor: int = 0
    is_bot: bool = False


_DECODER = msgspec.json.Decoder(_Line)


def parse(data: bytes) -> dict[str, list[ImportedClick]]:
    """code -> its clicks, oldest first: our JSON lines, or a CSV of YOURLS' `yourls_log`
    (whose `shorturl` is the code), the history a CSV of `yourls_url` does not carry."""
    text = decode(data)
    if not text.lstrip().startswith("{"):
        if not text.strip():
            raise FileError("the file is empty")
        return yourls.log_csv(text)
    found: dict[str, list[ImportedClick]] = defaultdict(list)
    for number, content in enumerate(text.splitlines(), start=1):
        if not content.strip():
            continue
        try:
            line = _DECODER.decode(content)
            ts_ms = int(datetime.fromisoformat(line.time).timestamp() * 1000)
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
            raise FileError(f"line {number}: not a click of `shortlink export --clicks`: {exc}") from None
        except RecursionError:
            raise FileError(f"line {number}: not a click of `shortlink export --clicks`: nested too deep") from None
        found[line.code].append(
            ImportedClick(
                ts_ms=ts_ms,
                user_agent=line.user_agent,
                # The host as a URL again: the recorder keeps the host of a Referer.
                referrer=f"https://{line.referrer}" + ("" if "/" in line.referrer else "/") if line.referrer else "",
                ip=f"visitor-{line.visitor}" if line.visitor else "",
                country=line.country,
                is_bot=line.is_bot,
                campaign=line.campaign,
                bot_final=True,
            )
        )
    for history in found.values():
        history.sort(key=lambda click: click.ts_ms)
    return found


def attach(rows: list[ImportRow | BadRow], clicks: dict[str, list[ImportedClick]]) -> list[ImportRow | BadRow]:
    """The rows with the clicks of their code as history."""
    for row in rows:
        if isinstance(row, ImportRow) and row.code in clicks:
            row.clicks = clicks[row.code]
    return rows
