"""Analytics charts for the dashboard: server-rendered SVG and HTML, no script, no inline style.

`time_series` draws clicks by day (up to 366 days) or by hour as an SVG column chart with a
`<table>` text equivalent; `breakdown` draws label / count / percentage rows as horizontal bars.
Every label comes from visitors (referrer hosts, campaign names) and is escaped by
`Markup.format`; nothing here is trusted text except the markup itself.

The dashboard's Content-Security-Policy is `style-src 'self'`, so the markup carries no `style=`
attribute. Sizes are SVG geometry attributes instead (`<rect width="37.5%">` is an attribute,
which the policy does not govern): that keeps a bar exactly as long as the API's percentage with
two decimals, where a fixed set of width classes (`w-0` … `w-100`) would round it and need a
hundred rules. Colours and type come from static/charts.css, through these classes:

- `chart`: a chart's card (`<figure>`); `chart-title` its caption; `chart-summary` the line under it
  (total and busiest period, which `chart-nowrap` keeps on one line); `chart-empty`: "No clicks in
  this period".
- `ts-frame`: the time series' two SVGs side by side: `ts-axis` (the y-axis numbers, hidden from
  screen readers) and `ts-plot` (the columns, `role="img"`, named by the caption).
- `ts-grid`: a gridline; `ts-base`: the zero line; `ts-tick`: a y-axis number.
- `ts-col`: one column's `<g>`, carrying its `<title>`; `ts-hit`: its full-height, transparent hover
  area; `ts-bar`: the column itself.
- `ts-x`: an x-axis label, with `ts-x-narrow` or `ts-x-wide`: one of two label sets, thinned for a
  narrow (phone) or wide chart; the stylesheet shows one set, by container width.
- `chart-table`: the `<details>` "Show as table"; `chart-data`: its `<table>`; `num`: a number cell.
- `breakdown`: a breakdown's `<table>`; `breakdown-name`, `breakdown-count`, `breakdown-share`: its
  cells; `breakdown-bar`: the bar's `<svg>`, with `breakdown-track` (100 %) and `breakdown-fill`.
- `visually-hidden`: text for screen readers only.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from markupsafe import Markup

# The time series' vertical geometry in CSS pixels (the SVG has no viewBox: widths are
# percentages of the card and text keeps its size on a phone).
HEIGHT = 200
PLOT_TOP = 12
PLOT_BOTTOM = 170
LABEL_BASELINE = 190
PLOT_HEIGHT = PLOT_BOTTOM - PLOT_TOP
MAX_GRIDLINES = 6
# x labels: a generous width per character of the 12 px axis font (DejaVu Sans digits, the widest
# common ones, are 7.6 px, its hyphen and colon half that), the least room between two labels, and
# the narrowest plot each label set is shown on: a 360 px phone leaves about 250 px of plot, and
# the stylesheet shows the wide set from a 36rem container, which leaves at least 480 px.
CHAR_PX = 7.5
LABEL_GAP_PX = 12
NARROW_PX = 250
WIDE_PX = 480
MAX_X_LABELS = 12

_ids = itertools.count(1)


def time_series(
    points: Sequence[tuple[str, int]], *, title: str, value_label: str = "Clicks", download: str = ""
) -> Markup:
    """A column chart of (label, value) points, its caption, a summary line and a table
    equivalent; with `download`, a "Download CSV" link to that address beside the title."""
    chart_id = f"chart-{next(_ids)}"
    values = [value for _, value in points]
    top = max([*values, 1])
    noun = value_label.lower()
    return Markup(
        '<figure class="chart">'
        '<figcaption class="chart-title" id="{id}-title">{title}</figcaption>{download}'
        '<p class="chart-summary" id="{id}-summary">{summary}</p>'
        '<div class="ts-frame">{axis}{plot}</div>'
        '<details class="chart-table"><summary>Show as table</summary>{table}</details>'
        "</figure>"
    ).format(
        id=chart_id,
        title=title,
        download=_download(download, title),
        summary=_summary(points, noun),
        axis=_axis(_gridlines(top)),
        plot=_plot(chart_id, points, top, noun),
        table=_table(title, points, value_label),
    )


def breakdown(items: Sequence[tuple[str, int, float]], *, title: str, download: str = "") -> Markup:
    """Rows of label, count and percentage, each with a bar as long as its percentage."""
    chart_id = f"chart-{next(_ids)}"
    if not items:
        body = Markup('<p class="chart-empty">No clicks in this period</p>')
    else:
        body = Markup(
            '<table class="breakdown" aria-labelledby="{id}-title">'
            '<thead class="visually-hidden"><tr><th scope="col">Name</th><th scope="col">Clicks</th>'
            '<th scope="col">Share</th></tr></thead><tbody>{rows}</tbody></table>'
        ).format(id=chart_id, rows=Markup("").join(_breakdown_row(*item) for item in items))
    return Markup(
        '<figure class="chart"><figcaption class="chart-title" id="{id}-title">{title}</figcaption>'
        "{download}{body}</figure>"
    ).format(id=chart_id, title=title, download=_download(download, title), body=body)


def _download(href: str, title: str) -> Markup:
    """The chart's figures as CSV; the link's name says which chart."""
    if not href:
        return Markup("")
    return Markup(
        '<a class="chart-download" href="{href}" download>'
        'Download CSV<span class="visually-hidden"> of {title}</span></a>'
    ).format(href=href, title=title)


def count_text(value: int) -> str:
    """A count for people: 12,345."""
    return f"{value:,}"


def percent_text(value: float) -> str:
    """A percentage as the API gives it (up to 2 decimals), without trailing zeros: 45.5%, 100%."""
    return f"{value:,.2f}".rstrip("0").rstrip(".") + "%"


def _gridline_values(top: int) -> list[int]:
    """Round values from 0 to at most `top`, 1, 2 or 5 times a power of ten apart, at most six."""
    steps = (multiple * 10**power for power in itertools.count() for multiple in (1, 2, 5))
    step = next(step for step in steps if step * (MAX_GRIDLINES - 1) >= top)
    return list(range(0, top + 1, step))


def _x_label_indices(labels: Sequence[str], plot_px: int) -> list[int]:
    """Evenly spaced points to label, first and last included, whose labels fit side by side in plot_px."""
    if not labels:
        return []
    label_px = max(len(label) for label in labels) * CHAR_PX
    for wanted in range(min(len(labels), MAX_X_LABELS), 1, -1):
        picks = sorted({round(k * (len(labels) - 1) / (wanted - 1)) for k in range(wanted)})
        spans = [_label_span(index, len(labels), label_px, plot_px) for index in picks]
        if all(left[1] + LABEL_GAP_PX <= right[0] for left, right in itertools.pairwise(spans)):
            return picks
    return [0]


def _label_span(index: int, count: int, label_px: float, plot_px: int) -> tuple[float, float]:
    """Where a label drawn by `_x_labels` lies, in pixels, on a plot plot_px wide."""
    start, anchor = _label_anchor(index, count, label_px, plot_px)
    left = start * plot_px / 100 - {"start": 0, "middle": label_px / 2, "end": label_px}[anchor]
    return left, left + label_px


def _label_anchor(index: int, count: int, label_px: float, plot_px: int) -> tuple[float, str]:
    """A label's x (percent) and text-anchor: under its column, or flush with an edge it would cross."""
    centre = (index + 0.5) * 100 / count
    if centre * plot_px / 100 < label_px / 2:
        return 0.0, "start"
    if (100 - centre) * plot_px / 100 < label_px / 2:
        return 100.0, "end"
    return centre, "middle"


def _gridlines(top: int) -> list[tuple[int, float]]:
    """(value, y) of each gridline for a plot whose top is `top`."""
    return [(value, PLOT_BOTTOM - value * PLOT_HEIGHT / top) for value in _gridline_values(top)]


def _axis(gridlines: list[tuple[int, float]]) -> Markup:
    """The y-axis numbers, right-aligned beside the plot (the table carries them for screen readers)."""
    width = round(max(len(count_text(value)) for value, _ in gridlines) * CHAR_PX + 8)
    ticks = Markup("").join(
        Markup(
            '<text class="ts-tick" x="{x}" y="{y:.2f}" text-anchor="end" dominant-baseline="middle">{text}</text>'
        ).format(x=width - 6, y=y, text=count_text(value))
        for value, y in gridlines
    )
    return Markup(
        '<svg class="ts-axis" width="{w}" height="{h}" aria-hidden="true" focusable="false">{t}</svg>'
    ).format(w=width, h=HEIGHT, t=ticks)


def _plot(chart_id: str, points: Sequence[tuple[str, int]], top: int, noun: str) -> Markup:
    """The gridlines, the columns and the x labels; all zero is a flat row of empty columns."""
    lines = Markup("").join(
        Markup('<line class="{cls}" x1="0" x2="100%" y1="{y:.2f}" y2="{y:.2f}"/>').format(
            cls="ts-base" if value == 0 else "ts-grid", y=y
        )
        for value, y in _gridlines(top)
    )
    return Markup(
        '<svg class="ts-plot" width="100%" height="{h}" role="img" '
        'aria-labelledby="{id}-title" aria-describedby="{id}-summary">{lines}{columns}{labels}</svg>'
    ).format(
        h=HEIGHT,
        id=chart_id,
        lines=lines,
        columns=Markup("").join(_column(index, len(points), point, top, noun) for index, point in enumerate(points)),
        labels=_x_labels([label for label, _ in points]),
    )


def _column(index: int, count: int, point: tuple[str, int], top: int, noun: str) -> Markup:
    """One column: a transparent full-height hover area and the bar, under one <title>."""
    label, value = point
    # Edges rounded as printed, so that touching columns (a year of them) share an edge exactly
    # and no pixel column between them is left unpainted.
    left, right = round(index * 100 / count, 4), round((index + 1) * 100 / count, 4)
    # A gap between columns while they are wide enough to show one; 366 days touch.
    gap = (right - left) * (0.25 if count <= 31 else 0.15 if count <= 92 else 0)
    height = value * PLOT_HEIGHT / top
    return Markup(
        '<g class="ts-col"><title>{label}: {value} {noun}</title>'
        '<rect class="ts-hit" x="{x:.4f}%" y="{top}" width="{slot:.4f}%" height="{plot}"/>'
        '<rect class="ts-bar" x="{bar_x:.4f}%" y="{y:.2f}" width="{bar_w:.4f}%" height="{height:.2f}"/></g>'
    ).format(
        label=label,
        value=count_text(value),
        noun=noun,
        x=left,
        top=PLOT_TOP,
        slot=right - left,
        plot=PLOT_HEIGHT,
        bar_x=left + gap / 2,
        y=PLOT_BOTTOM - height,
        bar_w=right - left - gap,
        height=height,
    )


def _x_labels(labels: list[str]) -> Markup:
    """Two thinned label sets, for a narrow and a wide plot; the stylesheet shows one."""
    if not labels:
        return Markup("")
    label_px = max(len(label) for label in labels) * CHAR_PX
    return Markup("").join(
        Markup('<text class="ts-x {cls}" x="{x:.4f}%" y="{y}" text-anchor="{anchor}">{text}</text>').format(
            cls=cls, x=x, y=LABEL_BASELINE, anchor=anchor, text=labels[index]
        )
        for cls, plot_px in (("ts-x-narrow", NARROW_PX), ("ts-x-wide", WIDE_PX))
        for index in _x_label_indices(labels, plot_px)
        for x, anchor in [_label_anchor(index, len(labels), label_px, plot_px)]
    )


def _summary(points: Sequence[tuple[str, int]], noun: str) -> Markup:
    """Total and busiest period, in words: the chart's short description."""
    total = sum(value for _, value in points)
    if not total:
        return Markup("No {noun} in this period").format(noun=noun)
    busiest, most = max(points, key=lambda point: point[1])
    # A date is not broken at its hyphens.
    return Markup('{total} {noun} in total; busiest: <span class="chart-nowrap">{busiest} ({most})</span>').format(
        total=count_text(total), noun=noun, busiest=busiest, most=count_text(most)
    )


def _table(title: str, points: Sequence[tuple[str, int]], value_label: str) -> Markup:
    rows = Markup("").join(
        Markup('<tr><th scope="row">{label}</th><td class="num">{value}</td></tr>').format(
            label=label, value=count_text(value)
        )
        for label, value in points
    )
    return Markup(
        '<table class="chart-data"><caption class="visually-hidden">{title}</caption>'
        '<thead><tr><th scope="col">Period</th><th scope="col" class="num">{value_label}</th></tr></thead>'
        "<tbody>{rows}</tbody></table>"
    ).format(title=title, value_label=value_label, rows=rows)


def _breakdown_row(label: str, count: int, percentage: float) -> Markup:
    share = min(max(percentage, 0.0), 100.0)
    return Markup(
        '<tr><th scope="row" class="breakdown-name">{label}'
        '<svg class="breakdown-bar" width="100%" height="8" aria-hidden="true" focusable="false">'
        '<rect class="breakdown-track" width="100%" height="100%" rx="4"/>'
        '<rect class="breakdown-fill" width="{share}%" height="100%" rx="4"/></svg></th>'
        '<td class="breakdown-count num">{count}</td><td class="breakdown-share num">{percent}</td></tr>'
    ).format(label=label, share=f"{share:.2f}", count=count_text(count), percent=percent_text(percentage))
