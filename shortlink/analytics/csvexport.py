"""An analytics answer as CSV (the dashboard's "Download CSV"): the same figures as the API's JSON.

One table of `section,label,clicks,percentage` rows, so that a spreadsheet reads every part of
the answer the same way: `summary` (each count by its API name, and the range), `clicksByDay`
and `clicksByHour` (the day or hour as label), each breakdown (its label), and `topUrls` (short
codes). Recent clicks are left out: they are single visits, not figures. Labels visitors
chose (a referring host, a `utm_source`) are text cells made safe for spreadsheets
(`shortlink.csvcells`); clicks and percentages stay numbers.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection

import msgspec

from shortlink.analytics.report import AccountAnalytics, LinkAnalytics
from shortlink.csvcells import safe_row

HEADER = ("section", "label", "clicks", "percentage")
SERIES = {"clicksByDay": "date", "clicksByHour": "hour"}
# Each breakdown's label field (the spec's names).
BREAKDOWNS = {
    "deviceBreakdown": "device",
    "browserBreakdown": "browser",
    "osBreakdown": "os",
    "countryBreakdown": "country",
    "referrerBreakdown": "referrer",
    "campaignBreakdown": "source",
}

SECTIONS = ("summary", *SERIES, *BREAKDOWNS, "topUrls")


def analytics_csv(answer: LinkAnalytics | AccountAnalytics, sections: Collection[str] | None = None) -> str:
    """The answer's rows; only those of `sections` when given (a chart's "Download CSV")."""
    figures = msgspec.to_builtins(answer)
    out = io.StringIO()
    # RFC 4180's CRLF: the writer then quotes a cell holding a bare carriage return (a visitor's
    # `utm_source` may), which a reader would otherwise take as the end of the row.
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(HEADER)
    wanted = SECTIONS if sections is None else sections
    if "summary" in wanted:
        writer.writerow(safe_row(("summary", "from", figures["range"]["from"], "")))
        writer.writerow(safe_row(("summary", "to", figures["range"]["to"], "")))
        for name, value in figures.items():
            if isinstance(value, int) and not isinstance(value, bool):
                writer.writerow(safe_row(("summary", name, value, "")))
    for section, label in SERIES.items():
        for item in figures.get(section, []) if section in wanted else []:
            writer.writerow(safe_row((section, item[label], item["clicks"], "")))
    for section, label in BREAKDOWNS.items():
        for item in figures[section] if section in wanted else []:
            writer.writerow(safe_row((section, item[label], item["clicks"], item["percentage"])))
    for item in figures.get("topUrls", []) if "topUrls" in wanted else []:
        writer.writerow(safe_row(("topUrls", item["shortCode"], item["clicks"], "")))
    return out.getvalue()
