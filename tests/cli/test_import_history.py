"""Imported click history: a YOURLS log becomes raw clicks and rollups exactly as if
the clicks had happened here, on both backends, written in many batches; a second run adds
nothing; the click pass shows a bar on a terminal only; the dump reader's fast path reads
what its general one reads."""

from __future__ import annotations

import asyncio
import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from shortlink.accounts import service as accounts
from shortlink.application import imports as app_imports
from shortlink.application.imports import run_import
from shortlink.imports import yourls
from shortlink.imports.history import HistoryLabels
from shortlink.imports.rows import ImportedClick, ImportRow
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.storage import clicks as click_store
from shortlink.storage import connect
from shortlink.storage import links as link_store
from shortlink.visits.classify import classify
from shortlink.visits.countries import open_table
from tests.cli.test_import import EMAIL, analytics, import_json, link_by_code
from tests.conftest import SHORT_HOST, bearer, run_cli
from tests.support.helpers import store_link
from tests.support.load import assert_rollups_match_raw_clicks
from tests.support.terminal import on_terminal

AGENTS = [
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.5 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "",
]
ADDRESSES = [f"203.0.113.{n}" for n in range(1, 7)]
LINKS = ["yo0", "yo1", "yo2"]
DAYS = ["2024-03-01", "2024-03-02", "2024-03-03", "2024-03-04", "2024-03-05"]


def write_dump(path: Path, clicks: int = 400) -> list[dict[str, str]]:
    """A mysqldump-style YOURLS dump with `clicks` log rows (a few on a keyword without link,
    a referrer with an escaped quote, NULL countries, a phpMyAdmin row-per-line INSERT);
    returns the log rows."""
    rng = random.Random(37)
    log = [
        {
            "time": f"{rng.choice(DAYS)} {rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}",
            "keyword": "gone" if n % 50 == 0 else rng.choice(LINKS),
            "referrer": rng.choice(["direct", "https://t.co/x", "https://news.example/it's"]),
            "agent": rng.choice(AGENTS),
            "ip": rng.choice(ADDRESSES),
            "country": rng.choice(["FR", "DE", "NULL"]),
        }
        for n in range(clicks)
    ]

    def quoted(text: str) -> str:
        return "NULL" if text == "NULL" else "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    def values(n: int, row: dict[str, str]) -> str:
        fields = [row["time"], row["keyword"], row["referrer"], row["agent"], row["ip"], row["country"]]
        return f"({n + 1}," + ",".join(quoted(field) for field in fields) + ")"

    urls = ",".join(
        f"('{code}','https://example.com/{code}','Page {code}','2024-01-01 00:00:00','::1',0)" for code in LINKS
    )
    lines = ["-- MySQL dump", f"INSERT INTO `yourls_url` VALUES {urls};"]
    half = len(log) // 2
    for start in range(0, half, 50):
        lines.append(
            "INSERT INTO `yourls_log` VALUES "
            + ",".join(values(n, log[n]) for n in range(start, min(start + 50, half)))
            + ";"
        )
    lines.append("INSERT INTO `yourls_log` (`click_id`, `click_time`, `shorturl`, `referrer`, `user_agent`,")
    lines.append("`ip_address`, `country_code`) VALUES")
    lines.append(",\n".join(values(n, log[n]) for n in range(half, len(log))) + ";")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log


def expected(log: list[dict[str, str]], code: str) -> tuple[dict[str, int], int, Counter]:
    """(human clicks per day, distinct visitors summed over days, human clicks per country)."""
    by_day: Counter = Counter()
    visitors: dict[str, set] = defaultdict(set)
    countries: Counter = Counter()
    for row in log:
        if row["keyword"] != code or (row["agent"] and classify(row["agent"]).is_bot):
            continue
        day = row["time"][:10]
        by_day[day] += 1
        visitors[day].add((row["ip"], row["agent"]))
        if row["country"] != "NULL":
            countries[row["country"]] += 1
    return dict(by_day), sum(len(seen) for seen in visitors.values()), countries


@pytest.mark.slow
@pytest.mark.both_backends
def test_imported_history_is_stored_as_if_the_clicks_had_happened_here(
    storage, make_config, client, conn, tmp_path, monkeypatch
):
    dump = tmp_path / "yourls.sql"
    log = write_dump(dump)
    # Batches and transactions far smaller than the log: each adds to rows the ones before made.
    monkeypatch.setattr(app_imports, "CLICK_BATCH", 37)
    monkeypatch.setattr(app_imports, "CLICKS_PER_TRANSACTION", 100)
    rows, history = yourls.stream(dump)
    written: list[int] = []
    report = asyncio.run(run_import(make_config(), EMAIL, "yourls", rows, history=history, on_clicks=written.append))
    assert [(row.action, row.code) for row in report.rows] == [("create", code) for code in LINKS]
    in_log = sum(row["keyword"] != "gone" for row in log)
    assert report.visits == in_log == sum(written) and len(written) == -(-in_log // 37)
    assert conn.execute("SELECT count(*) FROM click_rows").fetchone()[0] == in_log
    assert_rollups_match_raw_clicks(conn)
    key = accounts.create_key(conn, EMAIL).key
    whole = ("2024-03-01T00:00:00Z", "2024-03-05T23:59:59Z")
    for code in LINKS:
        by_day, visitors, countries = expected(log, code)
        answer = analytics(client, key, link_by_code(client, key, code)["id"], *whole)
        assert {item["date"]: item["clicks"] for item in answer["clicksByDay"] if item["clicks"]} == by_day
        assert answer["clicksInPeriod"] == answer["totalClicks"] == sum(by_day.values())
        assert answer["uniqueVisitors"] == visitors
        shown = {item["country"]: item["clicks"] for item in answer["countryBreakdown"]}
        assert {country: shown.get(country) for country in countries} == dict(countries)
        assert {item["referrer"] for item in answer["referrerBreakdown"]} <= {"Direct", "t.co", "news.example"}
    account = client.get("/api/v1/analytics", params={"from": whole[0], "to": whole[1]}, headers=bearer(key))
    assert account.json()["data"]["clicksInPeriod"] == sum(sum(expected(log, code)[0].values()) for code in LINKS)
    if not storage.startswith("postgresql"):  # no address is stored, not even in the log's pages
        stored = b"".join(path.read_bytes() for path in Path(storage).parent.glob(Path(storage).name + "*"))
        assert b"203.0.113." not in stored
    # The same import again, through the command: nothing is added.
    exit_code, again = import_json(storage, "yourls", dump)
    assert exit_code == 0 and [(row["action"], row["code"]) for row in again["rows"]] == [
        ("unchanged", code) for code in LINKS
    ]
    assert again["visits"] == 0
    assert conn.execute("SELECT count(*) FROM click_rows").fetchone()[0] == in_log
    assert_rollups_match_raw_clicks(conn)


def test_the_dump_reader_reads_rows_of_every_shape():
    """A row at a time when rows have as many values as the table has columns (a log's
    millions of rows), a value at a time otherwise: the same values either way."""
    dump = (
        b"INSERT INTO `yourls_url` VALUES ('a1','https://example.com/a','A ''title''','2024-01-01 00:00:00','::1',0,"
        b"'an extra column'),('b2','https://example.com/b',NULL,'2024-01-01 00:00:00','::1',0,'');\n"
        b"INSERT INTO `yourls_log` VALUES (1,'2024-03-01 10:00:00','a1','it\\'s ''here''','a\\\\b\\n',NULL,'fr'),\n"
        b" ( 2 , '2024-03-01 10:00:01' , 'b2' , 'direct' , 'x,y(z)' , '::1' , NULL ) ;\n"
    )
    rows = yourls.parse(dump)
    assert [(row.code, row.title) for row in rows if isinstance(row, ImportRow)] == [("a1", "A 'title'"), ("b2", None)]
    [first], [second] = (row.clicks for row in rows if isinstance(row, ImportRow))
    assert (first.referrer, first.user_agent, first.ip, first.country) == ("it's 'here'", "a\\b\n", "", "FR")
    assert (second.referrer, second.user_agent, second.ip, second.country) == ("", "x,y(z)", "::1", "")
    assert second.ts_ms - first.ts_ms == 1000


def test_the_click_pass_shows_a_bar_on_a_terminal_and_nothing_elsewhere(db_path, tmp_path):
    dump = tmp_path / "yourls.sql"
    write_dump(dump, clicks=60)
    command = ["import", "yourls", str(dump), "--email", EMAIL, "--db"]
    piped = run_cli(*command, str(db_path))
    assert "clicks" not in piped.stderr and piped.stdout.strip().endswith("0 refused")
    # One line, redrawn (tqdm's carriage returns), on the terminal the command was given.
    code, shown = on_terminal(*command, str(tmp_path / "other.db"), columns=80)
    bar = [line for line in shown.split("\r\n") if "import: clicks" in line]
    assert code == 0 and len(bar) == 1 and "\r" in bar[0]
    code, shown = on_terminal(*command, str(tmp_path / "third.db"), "--json", columns=80)
    assert code == 0 and "import: clicks" not in shown


def test_staged_clicks_of_a_link_deleted_meanwhile_are_left_out(db_path):
    """Between staging and the transaction (an import's history may take minutes), a link
    deleted from the dashboard takes its clicks with it; the others are written whole."""
    conn = connect(db_path)
    accounts.create_key(conn, EMAIL)
    account_id = conn.execute("SELECT id FROM accounts").fetchone()[0]
    kept, deleted = (
        store_link(conn, account_id, SHORT_HOST, CreateLink(original_url=f"https://example.com/{n}")) for n in (1, 2)
    )
    ids = [link_store.link_by_code(conn, link.short_code)["id"] for link in (kept, deleted)]
    labels = HistoryLabels(open_table())
    clicks = [
        ImportedClick(ts_ms=1_709_251_200_000 + n * 60_000, user_agent=AGENTS[n // 2 % 2], ip="198.51.100.7")
        for n in range(6)
    ]
    batch = [labels.stored(account_id, ids[n % 2], click) for n, click in enumerate(clicks)]
    assert click_store.stage_imported_clicks(conn, batch, 0) == 0
    service.delete_link(conn, account_id, deleted.id)
    assert click_store.write_staged_clicks(conn) == 3
    assert [tuple(row) for row in conn.execute("SELECT DISTINCT link_id FROM click_rows")] == [(ids[0],)]
    assert [tuple(row) for row in conn.execute("SELECT clicks, visitors FROM link_days")] == [(3, 2)]  # 2 agents
    assert_rollups_match_raw_clicks(conn)
    assert click_store.write_staged_clicks(conn) == 0  # nothing is left staged
    conn.close()
