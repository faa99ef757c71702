"""`shortlink import` and `shortlink export`: every source's real format (tests/fixtures/imports),
row-by-row reports, conflict policies, idempotence, click history in analytics, the round trip."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shortlink.accounts import service as accounts
from shortlink.imports import bitly, fdl, kutt, shlink, yourls
from shortlink.imports.rows import BadRow, ImportRow
from shortlink.links.schema import CreateLink
from tests.conftest import SHORT_HOST, bearer, run_cli
from tests.support import paths
from tests.support.helpers import cli_here, store_link

FIXTURES = paths.FIXTURES / "imports"
EMAIL = "owner@example.com"


@pytest.fixture
def taken(conn) -> None:
    """Another account already has the code `taken`."""
    other = accounts.ensure_account(conn, "other@example.com")
    store_link(conn, other["id"], SHORT_HOST, CreateLink(original_url="https://example.com/mine", custom_code="taken"))


def import_json(storage: str, source: str, file: Path | str, *options: str) -> tuple[int, dict]:
    code, output = cli_here("import", source, str(file), "--email", EMAIL, "--json", "--db", storage, *options)
    return code, json.loads(output)


def actions(report: dict) -> dict[int, tuple[str, str | None]]:
    return {row["line"]: (row["action"], row.get("code")) for row in report["rows"]}


def links_of(client, key: str, **params) -> list[dict]:
    return client.get("/api/v1/links", params={"limit": 100, **params}, headers=bearer(key)).json()["data"]


def link_by_code(client, key: str, code: str) -> dict:
    [link] = links_of(client, key, shortCode=code)
    return link


@pytest.mark.both_backends
def test_generic_csv_is_reported_row_by_row_and_a_second_run_changes_nothing(storage, taken, client, conn):
    code, report = import_json(storage, "csv", FIXTURES / "generic.csv")
    assert code == 1  # some rows were refused: the report says which, the good rows are in
    assert actions(report) == {
        2: ("create", "spring-sale"),
        3: ("skip", "taken"),
        4: ("skip", "admin"),
        5: ("error", "js"),
        6: ("unchanged", "spring-sale"),
        7: ("create", actions(report)[7][1]),
        8: ("create", "old-promo"),
        9: ("create", "short"),
        10: ("error", None),
        11: ("error", None),
    }
    reasons = {row["line"]: row.get("reason", "") for row in report["rows"]}
    assert "taken" in reasons[3] and "reserved" in reasons[4] and "http or https" in reasons[5]
    assert "url is empty" in reasons[10] and "'yesterday'" in reasons[11]
    assert (report["created"], report["unchanged"], report["skipped"], report["errors"]) == (4, 1, 2, 3)

    key = accounts.create_key(conn, EMAIL).key
    sale = link_by_code(client, key, "spring-sale")
    assert sale["title"] == "Frühlingsangebot 🌸" and sale["description"] == "Spring sale landing page"
    assert sale["createdAt"] == "2024-03-01T10:00:00.000Z" and sale["source"] is None
    tags = client.get(f"/api/v1/links/{sale['id']}/tags", headers=bearer(key)).json()["data"]["tags"]
    assert tags == [{"name": "campaign", "colour": "#ff8800"}, {"name": "spring", "colour": "#64748b"}]
    assert [link["shortCode"] for link in links_of(client, key, tag="spring")] == ["spring-sale"]
    # An expiry that has passed is kept: the link stays expired, as it was.
    assert link_by_code(client, key, "old-promo")["expiresAt"] == "2023-01-01T00:00:00.000Z"
    assert client.get("/l/old-promo", follow_redirects=False).status_code != 302
    no_code = link_by_code(client, key, actions(report)[7][1])
    assert no_code["title"] == "日本語のタイトル" and no_code["createdAt"] == "2023-12-24T07:30:00.000Z"
    assert no_code["expiresAt"] == "2030-01-01T00:00:00.000Z"
    assert client.get("/l/spring-sale", follow_redirects=False).headers["location"] == "https://example.com/spring-sale"

    before = conn.execute("SELECT count(*) FROM links").fetchone()[0]
    again_code, again = import_json(storage, "csv", FIXTURES / "generic.csv")
    assert again_code == 1
    assert {line: action for line, (action, _) in actions(again).items()} == {
        2: "unchanged",
        3: "skip",
        4: "skip",
        5: "error",
        6: "unchanged",
        7: "unchanged",
        8: "unchanged",
        9: "unchanged",
        10: "error",
        11: "error",
    }
    assert again["created"] == 0
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == before
    assert conn.execute("SELECT count(*) FROM link_tags").fetchone()[0] == 3


def test_a_dry_run_prints_what_would_happen_and_changes_nothing(db_path, taken, conn):
    result = run_cli(
        "import", "csv", str(FIXTURES / "generic.csv"), "--email", EMAIL, "--dry-run", "--db", str(db_path), check=False
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "line 2: create spring-sale -> https://example.com/spring-sale"
    assert lines[1] == "line 3: skip taken -> https://example.com/taken (code 'taken' is taken)"
    assert lines[5].startswith("line 7: create -> https://example.com/no-code")
    assert lines[-1] == "would create 4 links with 0 clicks; 1 unchanged, 2 skipped, 3 refused"
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 1  # the other account's
    assert conn.execute("SELECT count(*) FROM accounts WHERE email = ?", (EMAIL,)).fetchone()[0] == 0


def test_on_conflict_suffix_renames_and_fail_imports_nothing(db_path, taken, conn):
    code, report = import_json(str(db_path), "csv", FIXTURES / "generic.csv", "--on-conflict", "fail")
    assert code == 1 and report["applied"] is False and report["created"] == 0
    assert actions(report)[3] == ("error", "taken")
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 1

    _, report = import_json(str(db_path), "csv", FIXTURES / "generic.csv", "--on-conflict", "suffix")
    assert actions(report)[3] == ("create", "taken-2") and actions(report)[4] == ("create", "admin-2")
    reasons = {row["line"]: row.get("reason") for row in report["rows"]}
    assert reasons[3] == "code 'taken' is taken: used 'taken-2'"
    # Run again: the suffixed links are recognised, not suffixed once more.
    _, again = import_json(str(db_path), "csv", FIXTURES / "generic.csv", "--on-conflict", "suffix")
    assert actions(again)[3] == ("unchanged", "taken-2") and again["created"] == 0


def test_a_file_in_another_encoding_keeps_its_letters(db_path, client, conn):
    code, report = import_json(str(db_path), "csv", FIXTURES / "generic-latin1.csv")
    assert code == 0 and report["created"] == 2
    key = accounts.create_key(conn, EMAIL).key
    assert link_by_code(client, key, "cafe")["title"] == "Café Müller"
    assert link_by_code(client, key, "cafe")["originalUrl"] == "https://example.com/café"
    assert link_by_code(client, key, "zurich")["title"] == "Zürich € Preise"
    assert [link["shortCode"] for link in links_of(client, key, tag="Köln")] == ["cafe"]


def test_bitly_keeps_custom_back_halves_tags_and_dates():
    rows = bitly.parse((FIXTURES / "bitly-v4.json").read_bytes())
    first = rows[0]
    assert isinstance(first, ImportRow)
    assert (first.code, first.url, first.title) == (
        "launch-day",
        "https://example.com/launch?ref=bitly",
        "Launch — ünïcödé ✓",
    )
    assert first.tags == ["launch", "2021"] and first.created_at == "2021-06-01T09:30:00.000Z"
    assert [row.code for row in rows if isinstance(row, ImportRow)][1:] == ["4aBcDeF", "taken", "api", "launch-day"]
    assert rows[4] == BadRow(5, "no long_url")

    rows = bitly.parse((FIXTURES / "bitly.csv").read_bytes())
    summer = rows[0]
    assert isinstance(summer, ImportRow)
    assert (summer.code, summer.title, summer.tags) == ("summer24", "Summer, with a comma", ["summer", "2024"])
    assert summer.created_at == "2024-06-01T12:00:00.000Z"
    assert isinstance(rows[1], ImportRow) and rows[1].code == "4pLaIn5"
    assert rows[3] == BadRow(5, "long URL is empty")


def test_kutt_refuses_protected_and_banned_links_and_keeps_the_rest():
    rows = kutt.parse((FIXTURES / "kutt.json").read_bytes())
    first = rows[0]
    assert isinstance(first, ImportRow)
    assert (first.code, first.url, first.title) == ("k-launch", "https://example.com/kutt", "Kutt — ünïcödé title")
    assert first.expires_at == "2032-05-05T00:00:00.000Z" and first.created_at == "2023-05-05T10:20:30.000Z"
    assert rows[1] == BadRow(2, "password-protected in Kutt, which does not export passwords")
    assert isinstance(rows[2], ImportRow) and rows[2].created_at == "2023-05-07T10:20:30.000Z"
    assert rows[3] == BadRow(4, "banned in Kutt") and rows[4] == BadRow(5, "no target")


def test_firebase_dynamic_links_keep_destinations_per_platform_titles_and_campaigns():
    rows = fdl.parse((FIXTURES / "fdl.csv").read_bytes())
    promo = rows[0]
    assert isinstance(promo, ImportRow)
    assert promo.code == "promo"
    assert promo.url == "https://example.com/desktop?utm_source=newsletter&utm_medium=email&utm_campaign=spring"
    assert (promo.android_url, promo.ios_url) == ("https://example.com/android", "https://example.com/ios")
    assert (promo.title, promo.description) == ("Promo ✨ Titel", "Spring promo")
    assert isinstance(rows[1], ImportRow) and (rows[1].code, rows[1].url) == ("Xy12", "https://example.com/only-link")
    assert isinstance(rows[2], BadRow) and rows[2].line == 4


def analytics(client, key: str, link_id: str, start: str, end: str) -> dict:
    response = client.get(f"/api/v1/links/{link_id}/analytics", params={"from": start, "to": end}, headers=bearer(key))
    assert response.status_code == 200, response.text
    return response.json()["data"]


@pytest.mark.both_backends
def test_shlink_visits_answer_in_analytics_as_if_they_had_happened_here(storage, taken, client, conn):
    docs_row = shlink.parse((FIXTURES / "shlink.json").read_bytes())[0]
    assert isinstance(docs_row, ImportRow) and docs_row.tags == ["docs", "évènement"]
    assert [click.ts_ms for click in docs_row.clicks] == sorted(click.ts_ms for click in docs_row.clicks)
    code, report = import_json(storage, "shlink", FIXTURES / "shlink.json")
    assert code == 1 and actions(report) == {1: ("create", "docs-2024"), 2: ("skip", "taken"), 3: ("error", "bad-url")}
    assert report["visits"] == 4
    key = accounts.create_key(conn, EMAIL).key
    docs = link_by_code(client, key, "docs-2024")
    assert docs["title"] == "Documentation — ドキュメント" and docs["expiresAt"] == "2031-01-01T00:00:00.000Z"
    assert docs["androidUrl"] == "https://play.google.com/store/apps/details?id=com.example"
    answer = analytics(client, key, docs["id"], "2024-02-01T00:00:00Z", "2024-02-02T23:59:59Z")
    # Googlebot (Shlink's potentialBot) and facebookexternalhit (our classifier) are bots.
    assert answer["clicksInPeriod"] == 2 and answer["totalClicks"] == 2
    assert answer["clicksByDay"] == [{"date": "2024-02-01", "clicks": 1}, {"date": "2024-02-02", "clicks": 1}]
    assert {item["country"] for item in answer["countryBreakdown"]} == {"DE", "FR"}
    assert {item["referrer"] for item in answer["referrerBreakdown"]} == {"t.co", "Direct"}
    stored = conn.execute("SELECT count(*), sum(is_bot) FROM click_rows").fetchone()
    assert tuple(stored) == (4, 2)
    # Again: the link is unchanged and its history is not added twice.
    _, again = import_json(storage, "shlink", FIXTURES / "shlink.json")
    assert actions(again)[1] == ("unchanged", "docs-2024") and again["visits"] == 0
    assert conn.execute("SELECT count(*) FROM click_rows").fetchone()[0] == 4


def test_a_yourls_dump_brings_its_links_and_click_log(db_path, taken, client, conn):
    rows = yourls.parse((FIXTURES / "yourls.sql").read_bytes())
    assert [row.code for row in rows if isinstance(row, ImportRow)] == ["ozh", "yourls", "taken", "api", "bad", "x"]
    taken_row = rows[2]
    assert isinstance(taken_row, ImportRow) and taken_row.title == 'It\'s taken "elsewhere"'
    code, report = import_json(str(db_path), "yourls", FIXTURES / "yourls.sql")
    assert code == 1
    assert [(row["action"], row.get("code")) for row in report["rows"]] == [
        ("create", "ozh"),
        ("create", "yourls"),
        ("skip", "taken"),
        ("skip", "api"),
        ("error", "bad"),
        ("error", "x"),
    ]
    assert report["visits"] == 4  # the click of the keyword `gone`, which has no link, is left out
    key = accounts.create_key(conn, EMAIL).key
    ozh = link_by_code(client, key, "ozh")
    assert ozh["title"] == "Ozh RICHARD « ozh.org »" and ozh["createdAt"] == "2023-09-01T10:00:00.000Z"
    answer = analytics(client, key, ozh["id"], "2023-09-10T00:00:00Z", "2023-09-12T23:59:59Z")
    assert answer["clicksInPeriod"] == 2  # bingbot is a bot
    assert {item["country"] for item in answer["countryBreakdown"]} == {"GB", "DE"}
    assert {item["referrer"] for item in answer["referrerBreakdown"]} == {"Direct", "news.ycombinator.com"}
    assert answer["clicksByDay"][0] == {"date": "2023-09-10", "clicks": 2}
    curl = link_by_code(client, key, "yourls")
    assert analytics(client, key, curl["id"], "2023-09-12T00:00:00Z", "2023-09-12T23:59:59Z")["clicksInPeriod"] == 0


def export(storage: str, *options: str) -> str:
    result = run_cli("export", "--email", EMAIL, "--db", storage, *options, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


def listed(storage: str) -> list[dict]:
    result = run_cli("links", "list", "--email", EMAIL, "--limit", "100", "--json", "--db", storage)
    return [
        {name: value for name, value in link.items() if name not in ("id", "updatedAt")}
        for link in json.loads(result.stdout)["data"]
    ]


@pytest.mark.slow
def test_export_then_import_into_an_empty_install_reproduces_every_link(db_path, client, auth, tmp_path):
    made = []
    for body in (
        {"originalUrl": "https://example.com/a", "customCode": "first", "title": "Première ✓", "description": "d"},
        {
            "originalUrl": "https://example.com/b?x=1,2",
            "iosUrl": "https://apps.apple.com/app/id1",
            "androidUrl": "https://play.google.com/store/apps/details?id=x",
        },
        {"originalUrl": "https://example.com/c", "password": "s3cret-pass", "expiresAt": "2031-02-03T04:05:06Z"},
        {"originalUrl": "https://example.com/d", "title": 'Quotes "and", commas'},
    ):
        response = client.post("/api/v1/links", json=body, headers=auth)
        assert response.status_code == 201, response.text
        made.append(response.json()["data"])
    client.patch(f"/api/v1/links/{made[3]['id']}", json={"isActive": False}, headers=auth)
    tags = {"tags": [{"name": "client: Ünï", "colour": "#123abc"}, {"name": "q4"}]}
    client.put(f"/api/v1/links/{made[0]['id']}/tags", json=tags, headers=auth)
    client.put(f"/api/v1/links/{made[1]['id']}/tags", json={"tags": [{"name": "q4"}]}, headers=auth)

    exported = export(str(db_path))
    assert (
        exported.splitlines()[0]
        == "url,code,title,description,tags,created_at,expires_at,ios_url,android_url,is_active,password_hash,source"
    )
    for format in ("csv", "jsonl"):
        path = tmp_path / f"links.{format}"
        path.write_text(export(str(db_path), "--format", format), encoding="utf-8")
        fresh = str(tmp_path / f"fresh-{format}.db")
        code, report = import_json(fresh, "csv", path)
        assert code == 0 and report["created"] == 4, report
        assert listed(fresh) == listed(str(db_path))
        assert export(fresh) == exported  # tags with their colours, times, password hashes: all of it
    # The protected link is still protected by the same password.
    result = run_cli("links", "list", "--email", EMAIL, "--json", "--db", str(tmp_path / "fresh-csv.db"))
    assert [link["isPasswordProtected"] for link in json.loads(result.stdout)["data"]].count(True) == 1


def test_bad_input_is_one_line_never_a_traceback(db_path, tmp_path):
    missing = run_cli("import", "csv", str(tmp_path / "nope.csv"), "--email", EMAIL, "--db", str(db_path), check=False)
    assert missing.returncode == 1 and missing.stderr.startswith("shortlink: cannot read")
    assert missing.stderr.count("\n") == 1
    wrong = run_cli(
        "import", "kutt", str(FIXTURES / "generic.csv"), "--email", EMAIL, "--db", str(db_path), check=False
    )
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1 and "is not a kutt export: not JSON" in wrong.stderr
    no_url = tmp_path / "no-url.csv"
    no_url.write_text("link,name\nhttps://example.com,x\n")
    result = run_cli("import", "csv", str(no_url), "--email", EMAIL, "--db", str(db_path), check=False)
    assert result.returncode == 1 and "no `url` column" in result.stderr and "Traceback" not in result.stderr
    # Control characters from a file never reach the terminal raw.
    hostile = tmp_path / "hostile.csv"
    hostile.write_text("url,code,title\nhttps://example.com/\x1b[31m,red,\x1b[2Jcleared\n")
    result = run_cli("import", "csv", str(hostile), "--email", EMAIL, "--db", str(db_path), check=False)
    assert "\x1b" not in result.stdout + result.stderr and "\\u001b" in result.stdout
    unknown = run_cli("export", "--email", "nobody@example.com", "--db", str(db_path), check=False)
    assert unknown.returncode == 2 and unknown.stderr == "shortlink: no account with e-mail nobody@example.com\n"


def test_titles_from_other_tools_are_fitted_to_our_rules_not_refused(db_path, tmp_path, client, conn):
    # YOURLS keeps a page's title as it was: line breaks, tabs, any length.
    path = tmp_path / "titles.csv"
    path.write_text(
        'url,code,title\nhttps://example.com/t,long-title,"Line one\n\tline two"\n'
        f"https://example.com/u,longer,{'x' * 250}\n"
    )
    code, report = import_json(str(db_path), "csv", path)
    assert code == 0 and report["created"] == 2
    assert report["rows"][1]["reason"] == "title cut to 200 characters"
    key = accounts.create_key(conn, EMAIL).key
    assert link_by_code(client, key, "long-title")["title"] == "Line one line two"
    assert link_by_code(client, key, "longer")["title"] == "x" * 200


def test_export_streams_and_a_reader_that_stops_early_is_no_error(db_path, tmp_path):
    many = tmp_path / "many.csv"
    many.write_text("url,title\n" + "".join(f"https://example.com/{n},{'t' * 60} {n}\n" for n in range(2500)))
    assert run_cli("import", "csv", str(many), "--email", EMAIL, "--db", str(db_path)).returncode == 0
    command = f"{sys.executable} -m shortlink export --email {EMAIL} --db {db_path} | head -n 2"
    result = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60, check=False)
    assert result.stdout.splitlines()[0].startswith("url,code,title") and len(result.stdout.splitlines()) == 2
    assert result.stderr == ""


def test_an_import_honours_the_blocklist_as_every_door_does(db_path, tmp_path, monkeypatch):
    monkeypatch.setenv("SHORTLINK_PUBLIC_BLOCKED_HOSTS", "bit.ly")
    rows = tmp_path / "links.csv"
    rows.write_text("url,code\nhttps://bit.ly/abc,relay\nhttps://example.com/fine,fine\n", encoding="utf-8")
    code, report = import_json(str(db_path), "csv", rows)
    assert code == 1 and report["created"] == 1
    assert actions(report)[2][0] == "error" and "bit.ly" in report["rows"][0]["reason"]
    assert actions(report)[3] == ("create", "fine")
