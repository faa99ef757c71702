"""An analytics answer as CSV (issue 37: "Download CSV"): the same figures as the API's JSON.

One table of `section,label,clicks,percentage` rows, so that a spreadsheet reads every part of
the answer the same way: `summary` (each count by its API name, and the range), `clicksByDay`
and `clicksByHour` (the day or hour as label), each breakdown (its label), and `topUrls` (short
codes). Recent clicks are left out: they are single visits, not figures.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection

import msgspec

from shortlink.analytics.report import AccountAnalytics, LinkAnalytics

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
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    wanted = SECTIONS if sections is None else sections
    if "summary" in wanted:
        writer.writerow(("summary", "from", figures["range"]["from"], ""))
        writer.writerow(("summary", "to", figures["range"]["to"], ""))
        for name, value in figures.items():
            if isinstance(value, int) and not isinstance(value, bool):
                writer.writerow(("summary", name, value, ""))
    for section, label in SERIES.items():
        for item in figures.get(section, []) if section in wanted else []:
            writer.writerow((section, item[label], item["clicks"], ""))
    for section, label in BREAKDOWNS.items():
        for item in figures[section] if section in wanted else []:
            writer.writerow((section, item[label], item["clicks"], item["percentage"]))
    for item in figures.get("topUrls", []) if "topUrls" in wanted else []:
        writer.writerow(("topUrls", item["shortCode"], item["clicks"], ""))
    return out.getvalue()
