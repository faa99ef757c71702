"""The CSV formats of Shlink and YOURLS: Shlink's web-client export of its short URLs,
and YOURLS' `yourls_url` with its `yourls_log` click history as CSV files (phpMyAdmin's, or
MySQL's INTO OUTFILE). Fixtures and their provenance: tests/fixtures/imports/README.md."""

from __future__ import annotations

import pytest

from shortlink.accounts import service as accounts
from shortlink.imports import clicks, yourls
from tests.cli.test_import import EMAIL, FIXTURES, actions, analytics, import_json, link_by_code, links_of, taken
from tests.conftest import run_cli

__all__ = ["taken"]  # the fixture, used by name


@pytest.mark.both_backends
def test_shlink_csv_keeps_codes_titles_tags_and_dates_and_reports_every_awkward_row(storage, taken, client, conn):
    code, report = import_json(storage, "shlink", FIXTURES / "shlink-short_urls.csv")
    assert code == 1
    found = actions(report)
    assert found == {
        2: ("create", "menu"),
        3: ("skip", "taken"),
        4: ("skip", "admin"),
        5: ("error", "evil"),
        6: ("unchanged", "menu"),  # the same row twice
        7: ("error", None),
        8: ("error", None),
    }
    reasons = {row["line"]: row.get("reason", "") for row in report["rows"]}
    assert "longUrl is empty" in reasons[7] and "createdAt" in reasons[8] and "http or https" in reasons[5]
    key = accounts.create_key(conn, EMAIL).key
    menu = link_by_code(client, key, "menu")
    assert menu["title"] == "Café ☕ – menú del día" and menu["createdAt"] == "2024-03-01T10:00:00.000Z"
    assert [link["shortCode"] for link in links_of(client, key, tag="clients")] == ["menu"]
    _code, again = import_json(storage, "shlink", FIXTURES / "shlink-short_urls.csv")
    assert again["created"] == 0 and actions(again)[2] == ("unchanged", "menu")


def test_yourls_csv_pair_brings_links_in_their_encoding_and_the_log_as_history(db_path, taken, client, conn):
    code, report = import_json(
        str(db_path), "yourls", FIXTURES / "yourls_url.csv", "--clicks", str(FIXTURES / "yourls_log.csv")
    )
    assert code == 1
    assert actions(report) == {
        2: ("create", "ozh"),
        3: ("create", "cafe"),
        4: ("skip", "taken"),
        5: ("skip", "api"),
        6: ("error", None),
    }
    # ozh's three clicks and cafe's two; `gone` has no link, and a click without a time no day.
    assert report["visits"] == 5
    key = accounts.create_key(conn, EMAIL).key
    cafe = link_by_code(client, key, "cafe")
    assert cafe["title"] == "Café crème" and cafe["originalUrl"] == "https://example.com/café"  # Windows-1252
    ozh = link_by_code(client, key, "ozh")
    answer = analytics(client, key, ozh["id"], "2023-09-10T00:00:00Z", "2023-09-12T23:59:59Z")
    assert answer["clicksInPeriod"] == 2  # bingbot is left out by our own classifier
    assert {item["country"] for item in answer["countryBreakdown"]} == {"GB", "DE"}
    assert {item["referrer"] for item in answer["referrerBreakdown"]} == {"Direct", "news.ycombinator.com"}
    # A click without a user agent is not taken for a bot: nothing says it is one.
    assert analytics(client, key, cafe["id"], "2023-09-11T00:00:00Z", "2023-09-11T23:59:59Z")["clicksInPeriod"] == 2

    # A second run changes nothing, history included.
    _code, again = import_json(
        str(db_path), "yourls", FIXTURES / "yourls_url.csv", "--clicks", str(FIXTURES / "yourls_log.csv")
    )
    assert again["created"] == 0 and again["visits"] == 0
    assert analytics(client, key, ozh["id"], "2023-09-10T00:00:00Z", "2023-09-12T23:59:59Z")["clicksInPeriod"] == 2


def test_a_yourls_log_without_header_as_mysql_writes_it_is_read_in_table_order():
    outfile = (
        "1\t2023-09-10 08:00:00\tozh\tdirect\tMozilla/5.0 (X11; Linux x86_64) Firefox/118.0\t203.0.113.5\tGB\n"
        "2\t2023-09-10 08:01:00\tozh\t\\N\t\\N\t203.0.113.6\t\\N\n"
    )
    found = yourls.log_csv(outfile)
    assert [(visit.country, visit.referrer, visit.user_agent) for visit in found["ozh"]] == [
        ("GB", "", "Mozilla/5.0 (X11; Linux x86_64) Firefox/118.0"),
        ("", "", ""),
    ]
    phpmyadmin = '"1","2023-09-10 08:00:00","ozh","direct","curl/8.0","203.0.113.5","GB"\n'
    assert [visit.user_agent for visit in clicks.parse(phpmyadmin.encode())["ozh"]] == ["curl/8.0"]


def test_a_bad_clicks_file_is_one_line(db_path, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    failed = run_cli(
        "import", "yourls", str(FIXTURES / "yourls_url.csv"), "--clicks", str(empty), "--email", EMAIL,
        "--db", str(db_path), check=False,
    )  # fmt: skip
    assert failed.returncode != 0 and failed.stderr.strip().endswith("the file is empty")
    assert failed.stderr.count("\n") == 1
    missing = run_cli(
        "import", "yourls", str(FIXTURES / "yourls_url.csv"), "--clicks", str(tmp_path / "nope.csv"), "--email", EMAIL,
        "--db", str(db_path), check=False,
    )  # fmt: skip
    assert missing.returncode != 0 and "cannot read" in missing.stderr and "Traceback" not in missing.stderr


def test_a_dump_is_streamed_a_statement_at_a_time_phpmyadmin_rows_on_lines_of_their_own(tmp_path, db_path):
    dump = tmp_path / "phpmyadmin.sql"
    dump.write_text(
        "-- phpMyAdmin SQL Dump\n"
        "INSERT INTO `yourls_url` (`keyword`, `url`, `title`, `timestamp`, `ip`, `clicks`) VALUES\n"
        "('one', 'https://example.com/1', 'Un; deux', '2023-09-01 10:00:00', '127.0.0.1', 2),\n"
        "('two', 'https://example.com/2', 'It''s (two)', '2023-09-01 10:00:01', '127.0.0.1', 0);\n"
        "INSERT INTO `yourls_log` (`click_id`, `click_time`, `shorturl`, `referrer`, `user_agent`, `ip_address`,"
        " `country_code`) VALUES\n"
        "(1, '2023-09-10 08:00:00', 'one', 'direct', 'curl/8.0', '203.0.113.5', 'GB'),\n"
        "(2, '2023-09-10 08:01:00', 'one', 'direct', 'curl/8.0', '203.0.113.6', 'GB');\n",
        encoding="utf-8",
    )
    rows, history = yourls.stream(dump)
    assert [(row.line, row.code, row.title) for row in rows] == [(3, "one", "Un; deux"), (4, "two", "It's (two)")]
    assert [code for code, _visit in history()] == ["one", "one"]
    _code, planned = import_json(str(db_path), "yourls", dump, "--dry-run")
    assert planned["visits"] == 2 and planned["created"] == 2  # the dry run counts the history too
    _code, done = import_json(str(db_path), "yourls", dump)
    assert done["visits"] == 2 and [row.get("visits", 0) for row in done["rows"]] == [2, 0]
