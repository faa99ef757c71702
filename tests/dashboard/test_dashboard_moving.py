"""Moving in and out from the dashboard, through the real app (TestClient): the
import page's dry run and confirmation, the export download, bulk actions on ticked links,
the tag filter, and each chart's CSV. The Chromium walk is test_dashboard_moving_browser.py.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from litestar.testing import TestClient

from tests.support.dashboard import as_browser, create_link, csrf_of, field_error, post, signed_in
from tests.support.paths import FIXTURES
from tests.support.visitors import IPHONE, flush, visit

pytestmark = pytest.mark.both_backends
IMPORTS = FIXTURES / "imports"


@pytest.fixture
def make_client(make_client):
    def make(**overrides) -> TestClient:
        return as_browser(make_client(**overrides), "links_short_host" in overrides)

    return make


def upload(client: TestClient, name: str, data: bytes, source: str, policy: str = "skip"):
    token = csrf_of(client.get("/import").text)
    return client.post(
        "/import",
        data={"csrf": token, "source": source, "on_conflict": policy},
        files={"file": (name, data, "text/csv")},
        follow_redirects=False,
    )


def report_rows(html: str) -> list[tuple[str, str]]:
    """(line, what happens) of each row of the report table."""
    return re.findall(
        r'<span class="label">Line </span>(\d+)(?:, row \d+ of its INSERT)?</td>\s*'
        r'<td><span class="badge outcome-\w+">(\w+)</span>',
        html,
    )


def test_an_import_is_checked_row_by_row_then_confirmed_and_then_exported(make_client, conn):
    client = signed_in(make_client, conn)
    form = client.get("/import")
    assert form.status_code == 200
    assert 'enctype="multipart/form-data"' in form.text and '<label for="f-file">Export file</label>' in form.text
    data = (IMPORTS / "yourls.sql").read_bytes()

    checked = upload(client, "yourls.sql", data, "yourls")
    assert checked.status_code == 200, checked.text
    rows = report_rows(checked.text)
    assert rows and rows[0][1] in ("create", "refused")
    assert "Nothing has changed yet" in checked.text
    planned = sum(action == "create" for _line, action in rows)
    assert planned >= 2
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 0  # a dry run writes nothing

    # Confirming sends the same file back (the payload) and imports exactly the plan.
    payload = re.search(r'name="payload" value="([^"]+)"', checked.text)
    assert payload
    done = client.post(
        "/import",
        data={"csrf": csrf_of(checked.text), "source": "yourls", "on_conflict": "skip", "payload": payload[1]},
        files={"file": ("", b"", "application/octet-stream")},
    )
    assert done.status_code == 200
    assert f"Imported: {planned} link" in done.text
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == planned
    clicks = conn.execute("SELECT count(*) FROM clicks").fetchone()[0]
    assert clicks > 0  # YOURLS' log came in as clicks

    # The same file again changes nothing.
    again = upload(client, "yourls.sql", data, "yourls")
    assert all(action != "create" for _line, action in report_rows(again.text))

    # Export all links: the generic CSV, streamed, one row per link, the header once.
    export = client.get("/export/links?format=csv")
    assert export.status_code == 200
    assert export.headers["content-disposition"] == 'attachment; filename="links.csv"'
    records = list(csv.DictReader(io.StringIO(export.text)))
    assert len(records) == planned and export.text.count("url,code,title") == 1
    lines = client.get("/export/links?format=jsonl").text.splitlines()
    assert len(lines) == planned and lines[0].startswith("{")


def test_bad_uploads_are_named_beside_their_field(make_client, conn):
    client = signed_in(make_client, conn)
    empty = upload(client, "empty.csv", b"", "csv")
    assert empty.status_code == 400 and field_error(empty.text, "file") == "file: choose a file to import"
    wrong = upload(client, "x.json", b"not json at all", "shlink")
    assert wrong.status_code == 400 and "is not a shlink export" in field_error(wrong.text, "file")
    source = upload(client, "x.csv", b"url\nhttps://example.com\n", "myspace")
    assert source.status_code == 400 and "must be one of" in field_error(source.text, "source")
    policy = upload(client, "x.csv", b"url\nhttps://example.com\n", "csv", policy="maybe")
    assert policy.status_code == 400 and "must be one of" in field_error(policy.text, "on_conflict")
    token = csrf_of(client.get("/import").text)
    tampered = client.post(
        "/import",
        data={"csrf": token, "source": "csv", "on_conflict": "skip", "payload": "!!not base64!!"},
        files={"file": ("", b"", "application/octet-stream")},
    )
    assert tampered.status_code == 400 and "choose it again" in field_error(tampered.text, "file")
    # Without the CSRF token nothing is read at all.
    assert client.post("/import", files={"file": ("x.csv", b"url\n", "text/csv")}).status_code == 403


def test_ticked_links_are_paused_tagged_filtered_and_deleted_after_a_confirmation(make_client, conn):
    client = signed_in(make_client, conn)
    ids = [create_link(client, originalUrl=f"https://example.com/{number}") for number in range(3)]
    listing = client.get("/links")
    assert listing.text.count('name="ids"') == 3 and "<legend>With the ticked links</legend>" in listing.text

    paused = post(client, "/links/bulk", {"action": "pause", "ids": ids[:2], "back": "/links"}, page="/links")
    assert paused.status_code == 303 and paused.headers["location"] == "/links?bulk=pause&done=2&failed=0"
    assert "2 links paused." in client.get(paused.headers["location"]).text
    assert client.get("/links?state=paused").text.count('name="ids"') == 2

    tagged = post(client, "/links/bulk", {"action": "tag", "tag": "spring", "ids": ids[1:]}, page="/links")
    assert tagged.headers["location"] == "/links?bulk=tag&done=2&failed=0"
    filtered = client.get("/links?tag=spring")
    assert filtered.text.count('name="ids"') == 2 and "<option selected>spring</option>" in filtered.text
    untagged = post(client, "/links/bulk", {"action": "untag", "tag": "spring", "ids": ids[1]}, page="/links")
    assert untagged.headers["location"] == "/links?bulk=untag&done=1&failed=0"
    assert client.get("/links?tag=spring").text.count('name="ids"') == 1

    # Nothing ticked, no tag: a message, not an error page.
    nothing = post(client, "/links/bulk", {"action": "pause", "back": "/links?tag=spring"}, page="/links")
    assert nothing.headers["location"] == "/links?tag=spring&bulk=none"
    assert "Tick at least one link first." in client.get(nothing.headers["location"]).text
    no_tag = post(client, "/links/bulk", {"action": "tag", "ids": ids[0]}, page="/links")
    assert no_tag.headers["location"] == "/links?bulk=no-tag"
    assert "Type the tag to add or remove." in client.get("/links?bulk=no-tag").text
    assert "2 links tagged." in client.get(tagged.headers["location"]).text
    away = post(
        client, "/links/bulk", {"action": "pause", "ids": ids[0], "back": "https://evil.example/"}, page="/links"
    )
    assert away.headers["location"].startswith("/links?")

    # A delete asks first, listing the links; the confirmation deletes them.
    asked = post(client, "/links/bulk", {"action": "delete", "ids": ids[:2]}, page="/links")
    assert asked.status_code == 200 and "Delete 2 links?" in asked.text
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 3
    deleted = post(client, "/links/bulk", {"action": "delete", "ids": ids[:2], "confirm": "1"}, page="/links")
    assert deleted.headers["location"] == "/links?bulk=delete&done=2&failed=0"
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 1
    # Another account's link, or one gone, fails only itself.
    again = post(client, "/links/bulk", {"action": "resume", "ids": [ids[0], ids[2]], "confirm": "1"}, page="/links")
    assert again.headers["location"] == "/links?bulk=resume&done=1&failed=1"


def test_each_chart_downloads_its_figures_as_csv(make_client, conn):
    client = signed_in(make_client, conn)
    link_id = create_link(client, originalUrl="https://example.com/charted", customCode="charted")
    assert visit(client, "charted", IPHONE).status_code in (200, 302)
    flush(client)
    page = client.get("/analytics?days=7")
    hrefs = re.findall(r'class="chart-download" href="([^"]+)"', page.text)
    assert len(hrefs) == 7  # by day and the six breakdowns
    assert "/analytics/csv?days=7&amp;section=clicksByDay" in hrefs
    by_day = client.get(hrefs[0].replace("&amp;", "&"))
    assert by_day.status_code == 200 and by_day.headers["content-type"].startswith("text/csv")
    sections = {row["section"] for row in csv.DictReader(io.StringIO(by_day.text))}
    assert sections == {"summary", "clicksByDay"}
    everything = {row["section"] for row in csv.DictReader(io.StringIO(client.get("/analytics/csv?days=7").text))}
    assert {"summary", "clicksByDay", "deviceBreakdown", "topUrls"} <= everything

    link_page = client.get(f"/links/{link_id}/analytics")
    assert len(re.findall(r'class="chart-download"', link_page.text)) == 8  # and by hour
    by_hour = client.get(f"/links/{link_id}/analytics/csv?section=clicksByHour")
    assert {row["section"] for row in csv.DictReader(io.StringIO(by_hour.text))} == {"summary", "clicksByHour"}
    # The raw clicks of the page's range, as JSON lines: the one visit above, no visitor identity.
    assert 'href="/export/clicks?days=7"' in page.text
    raw = client.get("/export/clicks?days=7")
    assert raw.status_code == 200 and raw.headers["content-type"].startswith("application/jsonl")
    [line] = [json.loads(text) for text in raw.text.splitlines()]
    assert line["code"] == "charted" and line["visitor"] == 1 and "ip" not in line
    bad = client.get("/analytics/csv?section=nope")
    assert bad.status_code == 400 and "must be one of" in bad.text
