"""GET /links/{id}/analytics/csv and GET /analytics/csv: the API's figures as CSV (an extension)."""

from __future__ import annotations

import csv
import io

from shortlink.accounts import service as accounts
from tests.conftest import bearer, run_cli
from tests.support import paths
from tests.support.helpers import error_of

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
