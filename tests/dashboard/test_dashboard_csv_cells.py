"""The CSV downloads against spreadsheet formulas (OWASP "CSV Injection"), through the real app:
the link export writes a title, description or tag a spreadsheet would run with a `'` before it,
the generic import takes that `'` off again (an export imports as it was), and every CSV
download says its type once."""

from __future__ import annotations

import csv
import io
import re

import pytest
from litestar.testing import TestClient

from shortlink.accounts import service as accounts
from shortlink.storage import connect
from tests.conftest import bearer, run_cli
from tests.support.dashboard import as_browser, signed_in

EMAIL = "owner@example.com"
HOSTILE = [
    {"title": '=HYPERLINK("https://evil.example","Click")', "description": "+1+cmd|' /C calc'!A0", "tags": ["-minus"]},
    {"title": "@SUM(1+1)", "description": "-5", "tags": ["=tag", "plain"]},
    # Already starting with quotes: one more goes on, one comes off.
    {"title": "'=quoted", "description": "''+twice", "tags": ["'@tag"]},
    {"title": "it's fine", "description": "'plain quote", "tags": ["a-b"]},
]


@pytest.fixture
def make_client(make_client):
    def make(**overrides) -> TestClient:
        return as_browser(make_client(**overrides), "links_short_host" in overrides)

    return make


def export_of(client: TestClient) -> str:
    response = client.get("/export/links?format=csv")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    return response.text


def test_the_link_export_quotes_formulas_and_imports_back_unchanged(make_client, conn, tmp_path):
    client = signed_in(make_client, conn, EMAIL)
    key = bearer(accounts.create_key(conn, EMAIL).key)
    for number, fields in enumerate(HOSTILE):
        body = {"originalUrl": f"https://example.com/{number}", "title": fields["title"]}
        body["description"] = fields["description"]
        created = client.post("/api/v1/links", json=body, headers=key)
        assert created.status_code == 201, created.text
        tags = {"tags": [{"name": name} for name in fields["tags"]]}
        assert (
            client.put(f"/api/v1/links/{created.json()['data']['id']}/tags", json=tags, headers=key).status_code == 200
        )

    exported = export_of(client)
    records = list(csv.DictReader(io.StringIO(exported, newline="")))
    assert [record["title"] for record in records] == [
        '\'=HYPERLINK("https://evil.example","Click")',
        "'@SUM(1+1)",
        "''=quoted",
        "it's fine",
    ]
    assert [record["description"] for record in records] == [
        "'+1+cmd|' /C calc'!A0",
        "'-5",
        "'''+twice",
        "'plain quote",
    ]
    tags = [re.sub(r"#[0-9a-f]{6}", "", record["tags"]) for record in records]  # each tag's colour
    assert tags == ["'-minus", "'=tag;plain", "''@tag", "a-b"]
    for record in records:
        assert all(cell[:1] not in ("=", "+", "-", "@", "\t", "\r") for cell in record.values()), record

    # Into a fresh install with `shortlink import csv`: the same links, and the same export again.
    links_file, fresh = tmp_path / "links.csv", tmp_path / "fresh.db"
    links_file.write_text(exported, encoding="utf-8")
    imported = run_cli("import", "csv", str(links_file), "--email", EMAIL, "--db", str(fresh), check=False)
    assert imported.returncode == 0, imported.stderr
    again = run_cli("export", "--email", EMAIL, "--db", str(fresh), check=False)
    assert again.returncode == 0, again.stderr
    assert again.stdout == exported
    fresh_conn = connect(str(fresh))
    try:
        rows = fresh_conn.execute("SELECT title, description FROM links ORDER BY id").fetchall()
    finally:
        fresh_conn.close()
    assert [(row["title"], row["description"]) for row in rows] == [
        (fields["title"], fields["description"]) for fields in HOSTILE
    ]


def test_every_csv_download_says_its_type_once(make_client, conn):
    client = signed_in(make_client, conn, EMAIL)
    assert client.get("/analytics/csv").headers["content-type"] == "text/csv; charset=utf-8"
    assert client.get("/analytics/csv?section=clicksByDay").headers["content-type"] == "text/csv; charset=utf-8"
    export_of(client)
