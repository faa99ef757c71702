"""GET /links/{id}/analytics/csv and GET /analytics/csv: the API's figures as CSV (an extension)."""

from __future__ import annotations

import csv
import io
from urllib.parse import urlencode

from shortlink.accounts import service as accounts
from tests.conftest import bearer, run_cli
from tests.support import paths
from tests.support.helpers import error_of
from tests.support.visitors import flush, make_link, visit

SHLINK = paths.FIXTURES / "imports" / "shlink.json"
RANGE = {"from": "2024-02-01", "to": "2024-02-02"}


def test_the_csv_holds_the_same_figures_as_the_json(db_path, client, conn):
    # History imported from Shlink: two human clicks on two days, two bots.
    run_cli("import", "shlink", str(SHLINK), "--email", "owner@example.com", "--db", str(db_path), check=False)
    key = bearer(accounts.create_key(conn, "owner@example.com").key)
    [link] = client.get("/api/v1/links", params={"shortCode": "docs-2024"}, headers=key).json()["data"]
    for path in (f"/api/v1/links/{link['id']}/analytics", "/api/v1/analytics"):
        figures = client.get(path, params=RANGE, headers=key).json()["data"]
        response = client.get(f"{path}/csv", params=RANGE, headers=key)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/csv")
        assert response.headers["content-disposition"].startswith("attachment; filename=")
        rows = list(csv.reader(io.StringIO(response.text)))
        assert rows[0] == ["section", "label", "clicks", "percentage"]
        summary = {label: value for section, label, value, _ in rows if section == "summary"}
        assert summary["from"] == figures["range"]["from"] and summary["to"] == figures["range"]["to"]
        for name in ("totalClicks", "clicksInPeriod", "uniqueVisitors", "clicksToday"):
            assert int(summary[name]) == figures[name], name
        days = [(label, int(clicks)) for section, label, clicks, _ in rows if section == "clicksByDay"]
        assert (
            days
            == [(day["date"], day["clicks"]) for day in figures["clicksByDay"]]
            == [
                ("2024-02-01", 1),
                ("2024-02-02", 1),
            ]
        )
        countries = [
            (label, int(clicks), float(share))
            for section, label, clicks, share in rows
            if section == "countryBreakdown"
        ]
        assert countries == [
            (item["country"], item["clicks"], item["percentage"]) for item in figures["countryBreakdown"]
        ]
        assert {label for section, label, _, _ in rows if section == "countryBreakdown"} == {"DE", "FR"}


def test_the_csv_answers_errors_as_the_json_does(client, auth):
    assert error_of(client.get("/api/v1/links/lnk_nope/analytics/csv", headers=auth)) == "NOT_FOUND"
    assert error_of(client.get("/api/v1/analytics/csv", params={"days": "0"}, headers=auth)) == "VALIDATION_ERROR"
    assert client.get("/api/v1/analytics/csv").status_code == 401


# Text a spreadsheet would run as a formula, as visitors can choose it (OWASP "CSV Injection").
HOSTILE_SOURCES = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "\tlead", "\rlead"]
HOSTILE_HOSTS = ["=cmd.example", "-evil.example", "+evil.example"]  # a host never starts with @


def test_text_visitors_chose_cannot_run_as_a_formula_and_numbers_stay_numbers(client, auth):
    link = make_link(client, auth)
    for source in HOSTILE_SOURCES:
        visit(client, link["shortCode"], query=urlencode({"utm_source": source}))
    for host in HOSTILE_HOSTS:
        visit(client, link["shortCode"], Referer=f"https://{host}/page")
    flush(client)
    for path in (f"/api/v1/links/{link['id']}/analytics/csv", "/api/v1/analytics/csv"):
        response = client.get(path, headers=auth)
        assert response.status_code == 200
        rows = list(csv.reader(io.StringIO(response.text, newline="")))
        sources = {label for section, label, _, _ in rows if section == "campaignBreakdown"}
        hosts = {label for section, label, _, _ in rows if section == "referrerBreakdown"}
        assert {f"'{source}" for source in HOSTILE_SOURCES} <= sources
        assert {f"'{host}" for host in HOSTILE_HOSTS} <= hosts
        for row in rows:
            assert row[1][:1] not in ("=", "+", "-", "@", "\t", "\r"), row
            # Counts and shares are numbers, written as numbers.
            if row[0] != "section" and row[1] not in ("from", "to"):
                assert row[2].isdigit() and not row[2].startswith("'"), row


def test_the_csv_is_utf_8_text_csv_once(client, auth):
    link = make_link(client, auth)
    for path in (f"/api/v1/links/{link['id']}/analytics/csv", "/api/v1/analytics/csv"):
        response = client.get(path, headers=auth)
        assert response.headers["content-type"] == "text/csv; charset=utf-8"
