"""The dashboard's charts: the markup parsed as XML, the stylesheet's colours, and real Chromium.

The markup is well-formed XML (no void HTML elements), so xml.etree reads it whole: the
assertions are about what a browser would draw (column heights, bar widths, label positions),
not about strings. The browser test serves a page with every kind of chart under the dashboard's
`style-src 'self'` policy, in light and dark mode at phone and desktop width, measures what
Chromium rendered, runs axe-core and keeps screenshots in test-artifacts/charts-*.png.
"""

from __future__ import annotations

import http.server
import itertools
import math
import re
import xml.etree.ElementTree as ET
from datetime import date, timedelta
from pathlib import Path

import pytest

from shortlink.dashboard import charts
from tests.support.accessibility import axe_violations
from tests.support.browser import chromium, keep_screenshot
from tests.support.helpers import serve_in_background
from throwaway.live_server import free_port

STYLESHEET = Path(charts.__file__).parent / "static" / "charts.css"
HOSTILE = '<script>alert("x")</script>'


def days(count: int, value=lambda number: number) -> list[tuple[str, int]]:
    first = date(2025, 11, 24)
    return [((first + timedelta(days=number)).isoformat(), value(number)) for number in range(count)]


def parse(markup) -> ET.Element:
    return ET.fromstring(str(markup))


def with_class(root: ET.Element, name: str) -> list[ET.Element]:
    return [element for element in root.iter() if name in element.get("class", "").split()]


def columns(root: ET.Element) -> list[tuple[str, float, float]]:
    """(title, bar y, bar height) of each column."""
    return [
        (column.findtext("title"), float(bar.get("y")), float(bar.get("height")))
        for column in with_class(root, "ts-col")
        for bar in with_class(column, "ts-bar")
    ]


def test_one_column_per_point_with_heights_proportional_to_values():
    points = [("2026-11-01", 0), ("2026-11-02", 5), ("2026-11-03", 20), ("2026-11-04", 1_234), ("2026-11-05", 617)]
    root = parse(charts.time_series(points, title="Clicks by day"))
    drawn = columns(root)
    assert len(drawn) == len(points)
    assert [title for title, _, _ in drawn] == [
        "2026-11-01: 0 clicks",
        "2026-11-02: 5 clicks",
        "2026-11-03: 20 clicks",
        "2026-11-04: 1,234 clicks",
        "2026-11-05: 617 clicks",
    ]
    heights = [height for _, _, height in drawn]
    assert heights[0] == 0
    assert heights[3] == charts.PLOT_HEIGHT  # the largest value reaches the top
    for (_, value), height in zip(points, heights, strict=True):
        assert height == pytest.approx(value / 1_234 * charts.PLOT_HEIGHT, abs=0.01)
    # Every column stands on the baseline.
    assert all(y + height == pytest.approx(charts.PLOT_BOTTOM) for _, y, height in drawn)
    # Columns run left to right in order, side by side without overlapping.
    bars = [bar for column in with_class(root, "ts-col") for bar in with_class(column, "ts-bar")]
    lefts = [float(bar.get("x").rstrip("%")) for bar in bars]
    rights = [left + float(bar.get("width").rstrip("%")) for left, bar in zip(lefts, bars, strict=True)]
    assert all(right <= following for right, following in zip(rights, lefts[1:], strict=False))
    assert lefts[0] >= 0 and rights[-1] <= 100


def test_the_plot_is_an_image_named_by_the_caption_and_described_by_the_summary():
    root = parse(charts.time_series(days(7, lambda n: n * 3), title="Clicks by day"))
    (plot,) = with_class(root, "ts-plot")
    assert plot.get("role") == "img"
    (caption,) = root.iter("figcaption")
    assert plot.get("aria-labelledby") == caption.get("id") and caption.text == "Clicks by day"
    summary = next(element for element in root.iter() if element.get("id") == plot.get("aria-describedby"))
    assert "".join(summary.itertext()) == "63 clicks in total; busiest: 2025-11-30 (18)"
    (axis,) = with_class(root, "ts-axis")
    assert axis.get("aria-hidden") == "true"


def test_y_axis_has_a_few_round_gridlines_at_the_right_heights():
    for top in (1, 3, 7, 43, 100, 999, 1_234, 87_654):
        root = parse(charts.time_series([("a", top), ("b", top // 2)], title="t"))
        ticks = [int(tick.text.replace(",", "")) for tick in with_class(root, "ts-tick")]
        assert ticks[0] == 0 and ticks == sorted(ticks) and ticks[-1] <= top
        assert 2 <= len(ticks) <= charts.MAX_GRIDLINES, (top, ticks)
        step = ticks[1]
        assert ticks == list(range(0, ticks[-1] + 1, step))
        assert re.fullmatch(r"[125]0*", str(step)), (top, step)
        # The labels sit on their gridlines, and the lines are at value / top of the plot height.
        lines = with_class(root, "ts-grid") + with_class(root, "ts-base")
        line_ys = sorted(float(line.get("y1")) for line in lines)
        tick_ys = sorted(float(tick.get("y")) for tick in with_class(root, "ts-tick"))
        assert line_ys == tick_ys
        for value, y in zip(ticks, sorted(tick_ys, reverse=True), strict=True):
            assert y == pytest.approx(charts.PLOT_BOTTOM - value / top * charts.PLOT_HEIGHT, abs=0.01)


def test_all_zero_renders_a_flat_chart_with_an_axis_and_says_so():
    root = parse(charts.time_series(days(30, lambda n: 0), title="Clicks by day"))
    assert [height for _, _, height in columns(root)] == [0.0] * 30
    assert [tick.text for tick in with_class(root, "ts-tick")] == ["0", "1"]
    assert len(with_class(root, "ts-base")) == 1
    assert next(root.iter("p")).text == "No clicks in this period"
    # No points at all is the same empty chart, not an error.
    root = parse(charts.time_series([], title="Clicks by day", value_label="Unique visitors"))
    assert columns(root) == [] and next(root.iter("p")).text == "No unique visitors in this period"
    assert [tick.text for tick in with_class(root, "ts-tick")] == ["0", "1"]


def test_the_table_holds_every_label_and_value():
    points = days(366, lambda n: n * 37)
    root = parse(charts.time_series(points, title="Clicks by day", value_label="Clicks"))
    (details,) = root.iter("details")
    assert details.findtext("summary") == "Show as table"
    table = details.find("table")
    assert [cell.text for cell in table.iter("th") if cell.get("scope") == "col"] == ["Period", "Clicks"]
    rows = [(row.findtext("th"), row.findtext("td")) for row in table.find("tbody")]
    assert rows == [(label, f"{value:,}") for label, value in points]
    assert rows[-1] == ("2026-11-24", "13,505")


def test_x_labels_are_thinned_first_last_and_evenly_spaced():
    for points in (days(366), days(90), days(7), [(f"{hour:02d}:00", hour) for hour in range(24)]):
        root = parse(charts.time_series(points, title="t"))
        labels = [label for label, _ in points]
        for name, plot_px in (("ts-x-narrow", charts.NARROW_PX), ("ts-x-wide", charts.WIDE_PX)):
            shown = with_class(root, name)
            assert 2 <= len(shown) <= charts.MAX_X_LABELS, (name, len(shown))
            texts = [label.text for label in shown]
            assert texts[0] == labels[0] and texts[-1] == labels[-1]
            positions = [labels.index(text) for text in texts]
            gaps = [b - a for a, b in itertools.pairwise(positions)]
            assert max(gaps) - min(gaps) <= 1, gaps
            # Laid out at the narrowest width this set is shown at, no two labels overlap.
            spans = [label_span(label, max(map(len, labels)) * charts.CHAR_PX, plot_px) for label in shown]
            assert all(left[1] < right[0] for left, right in itertools.pairwise(spans)), spans
    # Short labels with room to spare are all shown.
    week = [(name, 1) for name in ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")]
    assert len(with_class(parse(charts.time_series(week, title="t")), "ts-x-wide")) == 7
    assert len(with_class(parse(charts.time_series(days(1), title="t")), "ts-x-narrow")) == 1


def label_span(label: ET.Element, width: float, plot_px: int) -> tuple[float, float]:
    x = float(label.get("x").rstrip("%")) * plot_px / 100
    left = x - {"start": 0, "middle": width / 2, "end": width}[label.get("text-anchor")]
    return left, left + width


def test_visitor_labels_and_titles_are_escaped():
    markup = str(
        charts.time_series([(HOSTILE, 3), ("ok", 1)], title=f"Clicks {HOSTILE}", value_label=HOSTILE)
        + charts.breakdown([(HOSTILE, 3, 75.0), ("ok", 1, 25.0)], title=HOSTILE)
    )
    assert "<script" not in markup.lower()
    assert markup.count("&lt;script&gt;") >= 8
    root = parse(f"<div>{markup}</div>")
    assert all(element.tag != "script" for element in root.iter())
    assert root.find(".//figcaption").text == f"Clicks {HOSTILE}"
    assert with_class(root, "ts-col")[0].findtext("title").startswith(f"{HOSTILE}: 3 ")
    assert with_class(root, "breakdown-name")[0].text == HOSTILE


def test_markup_has_no_inline_style_or_script_and_unique_ids():
    markup = str(
        charts.time_series(days(30), title="By day")
        + charts.time_series(days(30), title="By day")
        + charts.breakdown([("a", 1, 100.0)], title="Devices")
        + charts.breakdown([], title="Devices")
    )
    root = parse(f"<div>{markup}</div>")
    assert not [element for element in root.iter() if "style" in element.attrib or element.tag.endswith("style")]
    ids = [element.get("id") for element in root.iter() if element.get("id")]
    assert len(ids) == len(set(ids)) == 6
    for element in root.iter():
        for reference in ("aria-labelledby", "aria-describedby"):
            if element.get(reference):
                assert element.get(reference) in ids


def test_breakdown_bars_are_as_long_as_their_percentage():
    items = [("iOS", 12_345, 61.73), ("Android", 7_000, 35.0), ("Other", 655, 3.27), ("Tiny", 1, 0.01)]
    root = parse(charts.breakdown(items, title="Operating systems"))
    (table,) = root.iter("table")
    assert table.get("aria-labelledby") == root.find("figcaption").get("id")
    rows = table.find("tbody").findall("tr")
    assert len(rows) == len(items)
    for row, (label, count, percentage) in zip(rows, items, strict=True):
        name, count_cell, share_cell = row
        assert share_cell.get("class") == "breakdown-share num"
        assert name.tag == "th" and name.get("scope") == "row" and name.text == label
        (fill,) = with_class(name, "breakdown-fill")
        (track,) = with_class(name, "breakdown-track")
        assert track.get("width") == "100%"
        assert float(fill.get("width").rstrip("%")) == pytest.approx(percentage)
        assert name.find("svg").get("aria-hidden") == "true"
        assert count_cell.text == f"{count:,}"
    assert [row[2].text for row in rows] == ["61.73%", "35%", "3.27%", "0.01%"]
    assert charts.percent_text(100.0) == "100%" and charts.percent_text(12.5) == "12.5%"


def test_empty_breakdown_says_no_clicks():
    root = parse(charts.breakdown([], title="Referrers"))
    assert root.find("figcaption").text == "Referrers"
    assert [p.text for p in root.iter("p")] == ["No clicks in this period"]
    assert root.find(".//table") is None


# The stylesheet: colours and classes.


def custom_properties(block: str) -> dict[str, str]:
    return dict(re.findall(r"--(chart-[a-z-]+):\s*(#[0-9a-f]{6})", block))


def luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, other: str) -> float:
    lighter, darker = sorted((luminance(one), luminance(other)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def test_colours_have_enough_contrast_in_light_and_dark_mode():
    css = STYLESHEET.read_text()
    light_block, dark_block = css.split("@media (prefers-color-scheme: dark)")
    light, dark = custom_properties(light_block), custom_properties(dark_block)
    assert set(light) == set(dark) and len(light) >= 8
    for scheme in (light, dark):
        background = scheme["chart-bg"]
        for text in ("chart-text", "chart-muted"):
            assert contrast(scheme[text], background) >= 4.5, (text, scheme[text])
        for graphic in ("chart-bar", "chart-bar-hover", "chart-base", "chart-focus"):
            assert contrast(scheme[graphic], background) >= 3, (graphic, scheme[graphic])
        # A bar also stands out from its track and from the hover highlight behind it.
        assert contrast(scheme["chart-bar"], scheme["chart-track"]) >= 3
        assert contrast(scheme["chart-bar-hover"], scheme["chart-track"]) >= 3


def test_every_class_in_the_markup_is_styled_or_documented():
    markup = charts.time_series(days(30), title="t") + charts.breakdown([("a", 1, 100.0)], title="t")
    markup += charts.breakdown([], title="t") + charts.time_series(days(3, lambda n: 0), title="t")
    used = {name for element in parse(f"<div>{markup}</div>").iter() for name in element.get("class", "").split()}
    styled = set(re.findall(r"\.([a-z][a-z0-9-]*)", STYLESHEET.read_text()))
    documented = set(re.findall(r"`([a-z][a-z0-9-]*)`", charts.__doc__ or ""))
    assert used <= styled
    assert used <= documented


# Real Chromium: what a person sees.


PAGE_CSS = """
:root { color-scheme: light dark; font-family: system-ui, sans-serif; }
body { margin: 0; background: Canvas; color: CanvasText; }
main { display: grid; gap: 1rem; max-width: 60rem; margin: 0 auto; padding: 1rem; }
h1 { margin: 0; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); }
"""
CSP = "default-src 'none'; style-src 'self'; img-src 'self'"


def chart_page() -> str:
    by_day = days(90, lambda n: (n * 37) % 23 * (n % 7 + 1) + (400 if n == 60 else 0))
    by_hour = [(f"{hour:02d}:00", [0, 0, 1, 3, 0, 2, 9, 14, 21, 18, 11, 7][hour % 12] * 3) for hour in range(24)]
    parts = [
        charts.time_series(by_day, title="Clicks by day"),
        charts.time_series(
            days(366, lambda n: round(300 + 200 * math.sin(n / 29) + 60 * (n % 7 > 4) + n)), title="Clicks over a year"
        ),
        charts.time_series(by_hour, title="Clicks by hour, last 24 hours"),
        charts.time_series(days(30, lambda n: 0), title="Unique visitors", value_label="Unique visitors"),
    ]
    breakdowns = [
        charts.breakdown(
            [
                ("news.ycombinator.com", 4_210, 42.1),
                ("www.google.com", 2_950, 29.5),
                (HOSTILE, 1_500, 15.0),
                ("a-very-long-referrer-host-name-that-wraps.example.co.uk", 1_338, 13.38),
                ("t.co", 2, 0.02),
            ],
            title="Referrers",
        ),
        charts.breakdown([("Mobile", 6_400, 64.0), ("Desktop", 3_100, 31.0), ("Tablet", 500, 5.0)], title="Devices"),
        charts.breakdown([], title="Campaigns"),
    ]
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<title>Charts</title><link rel="stylesheet" href="/page.css"><link rel="stylesheet" href="/charts.css">'
        f'</head><body><main><h1>Analytics</h1>{"".join(parts)}<div class="grid">{"".join(breakdowns)}</div>'
        "</main></body></html>"
    )


def serve(files: dict[str, tuple[str, bytes]]) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path not in files:
                self.send_error(404)
                return
            content_type, body = files[self.path]
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    serve_in_background(server)
    return server


@pytest.fixture(scope="module")
def chart_server():
    server = serve(
        {
            "/": ("text/html; charset=utf-8", chart_page().encode()),
            "/charts.css": ("text/css", STYLESHEET.read_bytes()),
            "/page.css": ("text/css", PAGE_CSS.encode()),
        }
    )
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    # No destination site here: the chart page is the only thing the browser opens.
    with chromium(destination_port=0) as launched:
        yield launched


RENDERED = """() => {
  const visible = (element) => getComputedStyle(element).display !== 'none';
  const box = (element) => { const r = element.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; };
  return {
    plots: [...document.querySelectorAll('.ts-plot')].map((plot) => ({
      height: plot.getBoundingClientRect().height,
      bars: [...plot.querySelectorAll('.ts-bar')].map((bar) => bar.getBBox().height),
      labels: [...plot.querySelectorAll('.ts-x')].filter(visible).map(box),
      plotBox: box(plot),
    })),
    fills: [...document.querySelectorAll('.breakdown-name')].map((name) => [
      name.querySelector('.breakdown-fill').getBoundingClientRect().width,
      name.querySelector('.breakdown-track').getBoundingClientRect().width,
    ]),
    barColour: getComputedStyle(document.querySelector('.ts-bar')).fill,
    overflow: document.documentElement.scrollWidth > document.documentElement.clientWidth,
  };
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("device", "width"), [("phone", 375), ("desktop", 1100)])
def test_charts_in_chromium_are_drawn_to_scale_legible_and_accessible(browser, chart_server, scheme, device, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    refused = []
    page.on("console", lambda message: refused.append(message.text) if "Content Security Policy" in message.text else 0)
    page.emulate_media(color_scheme=scheme)
    page.goto(chart_server)
    rendered = page.evaluate(RENDERED)
    assert refused == []  # nothing inline that the dashboard's style-src 'self' would block
    assert not rendered["overflow"]  # no sideways scrolling, even on a phone
    assert rendered["barColour"] == {"light": "rgb(37, 99, 235)", "dark": "rgb(88, 166, 255)"}[scheme]
    for plot in rendered["plots"]:
        bars = plot["bars"]
        if max(bars) > 0:
            assert max(bars) == pytest.approx(charts.PLOT_HEIGHT, abs=0.5)
        labels = sorted(plot["labels"])
        assert 1 <= len(labels) <= charts.MAX_X_LABELS
        left, right = plot["plotBox"][:2]
        for one, other in itertools.pairwise(labels):
            assert one[1] + 4 <= other[0], f"x labels overlap at {width}px: {labels}"
        assert labels[0][0] >= left - 0.5 and labels[-1][1] <= right + 0.5
    assert min(track for _, track in rendered["fills"]) > 100
    shares = [42.1, 29.5, 15.0, 13.38, 0.02, 64.0, 31.0, 5.0]
    assert [fill / track * 100 for fill, track in rendered["fills"]] == pytest.approx(shares, abs=0.5)
    assert not page.get_by_role("table", name="Clicks by hour, last 24 hours").is_visible()
    page.get_by_text("Show as table").nth(2).click()
    assert page.get_by_role("table", name="Clicks by hour, last 24 hours").is_visible()
    assert axe_violations(page) == []
    keep_screenshot(page, f"charts-{device}-{scheme}", full_page=True)
    context.close()
