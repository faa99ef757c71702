"""The dashboard's import with hostile and malformed files and the daily link limit, through the
real app (TestClient): each malformed row a refused row of the report, each malformed file the
one error beside the file field, never a 500; uploads count against the account's daily limit;
a parse past its deadline is ended with a clear error. A real server's answers during an import
are in tests/system/test_import_keeps_serving.py."""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from shortlink.application.imports import parse_upload
from shortlink.errors import ValidationError
from tests.cli.test_import_hostile import MALFORMED_FILES, MALFORMED_ROWS, VALID_INSERT
from tests.dashboard.test_dashboard_moving import IMPORTS, make_client, report_rows, upload
from tests.support.dashboard import csrf_of, field_error, signed_in

pytestmark = pytest.mark.both_backends
__all__ = ["make_client"]  # the fixture, used by name

# As many uploads as one test makes: the per-minute limit on imports is not what these test.
UPLOADS = {"dashboard_imports_per_minute_per_account": 1000}


def reasons(html: str) -> list[str]:
    return [text.replace("&#39;", "'") for text in re.findall(r'<span class="label">Why: </span>([^<]*)</td>', html)]


def test_malformed_rows_are_refused_rows_and_malformed_files_one_error(make_client, conn):
    client = signed_in(make_client, conn, **UPLOADS)
    for source, content, line, reason in MALFORMED_ROWS:
        checked = upload(client, "file", content.encode(), source)
        assert checked.status_code == 200, (source, checked.text)
        rows = dict(report_rows(checked.text))
        assert rows[str(line)] == "refused" and list(rows.values()).count("create") == 1, (source, rows)
        assert any(reason in text for text in reasons(checked.text)), (source, reasons(checked.text))
    for source, content, reason in MALFORMED_FILES:
        refused = upload(client, "file", content.encode(), source)
        assert refused.status_code == 400 and reason in field_error(refused.text, "file"), (source, refused.text)


def test_hostile_dumps_are_refused_at_once(make_client, conn):
    client = signed_in(make_client, conn, **UPLOADS)
    for hostile in (b"INSERT INTO yourls_url (" * 8000, VALID_INSERT + b"CREATE TABLE a (" * 8000):
        started = time.perf_counter()
        answer = upload(client, "hostile.sql", hostile, "yourls")
        assert time.perf_counter() - started < 10  # it held every request for 29 s
        assert answer.status_code in (200, 400), answer.text


def test_a_dumps_rows_say_their_place_in_their_insert(make_client, conn):
    client = signed_in(make_client, conn, **UPLOADS)
    checked = upload(client, "yourls.sql", (IMPORTS / "yourls.sql").read_bytes(), "yourls")
    assert "37, row 5 of its INSERT" in checked.text
    assert [line for line, _action in report_rows(checked.text)] == ["37"] * 6


def confirm(client, checked, source: str = "csv"):
    payload = re.search(r'name="payload" value="([^"]+)"', checked.text)
    assert payload, checked.text
    return client.post(
        "/import",
        data={"csrf": csrf_of(checked.text), "source": source, "on_conflict": "skip", "payload": payload[1]},
        files={"file": ("", b"", "application/octet-stream")},
    )


def test_an_import_counts_against_the_daily_link_limit(make_client, conn):
    client = signed_in(make_client, conn, limits_links_per_day=5, **UPLOADS)
    # Links made years ago at the source are made today here: they count against today's limit.
    rows = "".join(f"https://example.com/{n},code-{n},{'2019-05-01T10:00:00Z' if n % 2 else ''}\n" for n in range(12))
    data = f"url,code,created_at\n{rows}".encode()
    checked = upload(client, "links.csv", data, "csv")
    actions = [action for _line, action in report_rows(checked.text)]
    assert actions == ["create"] * 5 + ["refused"] * 7
    assert reasons(checked.text) == ["Daily limit of 5 new links reached; it resets at 00:00 UTC"] * 7
    done = confirm(client, checked)
    assert done.status_code == 200 and "Imported: 5 links created" in done.text, done.text
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 5
    # The day's limit is spent: the API refuses with the spec's error, and so does another import.
    again = upload(client, "more.csv", b"url\nhttps://example.com/more\n", "csv")
    assert [action for _line, action in report_rows(again.text)] == ["refused"]
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 5


def test_a_parse_past_its_deadline_ends_with_a_clear_error():
    big = b"url\n" + b"".join(b"https://example.com/%d\n" % n for n in range(200_000))
    with pytest.raises(ValidationError) as refused:
        asyncio.run(parse_upload("csv", big, seconds=0.01))
    assert refused.value.field == "file" and "took longer than 0.01 s to read" in refused.value.message
    assert len(asyncio.run(parse_upload("csv", big))) == 200_000  # in its time, the same file reads
