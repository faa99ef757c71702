"""`shortlink migrate --to postgresql://...`: a demo installation on SQLite, copied by the real
command into a throwaway PostgreSQL, answers every analytics question alike through the API."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from litestar.testing import TestClient

from shortlink.accounts import service as accounts
from shortlink.applinks import service as applinks
from shortlink.applinks.schema import CreateApp, IosApp, SetLinkApp
from shortlink.config import load_config
from shortlink.links.schema import CreateLink
from shortlink.storage import applinks as applinks_store
from shortlink.storage import bio, connect, sessions
from shortlink.storage.copy import TABLES
from shortlink.storage.link_rules import add_destination, replace_document
from shortlink.storage.tags import replace_link_tags
from shortlink.web.asgi import create_app
from shortlink.webhooks import endpoints as webhook_endpoints
from shortlink.webhooks import outbox
from shortlink.webhooks.events import CreateWebhook
from shortlink.webhooks.send import DeliveryResult
from tests.conftest import bearer, run_cli, storage_settings
from tests.support.helpers import store_link

# Seeding and moving 100,000 clicks takes seconds.
pytestmark = pytest.mark.slow

EMAIL = "demo@example.com"
# 100,000 demo clicks: seeded through the real recorder in a few seconds here.
CLICKS = 100_000
TODAY = datetime.now(UTC).date()
# The rolling ranges end at a fixed moment: ending "now", they would move on between the two
# sets of answers (the migration takes seconds), and a click could leave one of them.
UNTIL = datetime.now(UTC).replace(microsecond=0).isoformat()
RANGES = [{"days": days, "to": UNTIL} for days in ("1", "7", "30", "90", "366")] + [
    {"from": (TODAY - timedelta(days=40)).isoformat(), "to": (TODAY - timedelta(days=10)).isoformat()}
]


@pytest.fixture(scope="module")
def installation(tmp_path_factory):
    """A seeded SQLite installation with a bit of everything: a deleted link (its id must
    never come back), a revoked key, a custom domain, a title still to fetch, a bio page, a
    dashboard session, a tag, link rules. Seeded once: the tests only read it."""
    path = tmp_path_factory.mktemp("installation") / "shortlink.db"
    seeded = run_cli(
        "demo", "seed", "--email", EMAIL, "--links", "12", "--clicks", str(CLICKS), "--days", "60", "--db", str(path)
    )
    assert "seeded 12 links" in seeded.stdout
    run_cli("domain", "add", "--email", EMAIL, "links.brand.example", "--db", str(path))
    conn = connect(path)
    try:
        account_id = conn.execute("SELECT id FROM accounts").fetchone()[0]
        key = accounts.create_key(conn, EMAIL).key
        accounts.revoke_key(conn, accounts.create_key(conn, EMAIL).key_id)
        store_link(
            conn, account_id, "https://sho.rt", CreateLink(original_url="https://example.com/t"), fetch_title=True
        )
        doomed = store_link(conn, account_id, "https://sho.rt", CreateLink(original_url="https://example.com/x"))
        conn.execute("DELETE FROM links WHERE public_id = ?", (doomed.id,))
        high_water = conn.execute("SELECT last_id FROM link_id_high_water").fetchone()[0]
        fields = {"handle": "demo_page", "title": "Demo", "description": "", "is_published": 1}
        page = bio.save_page(conn, account_id, fields, "2026-01-01T00:00:00.000Z")
        first_link = conn.execute("SELECT id FROM links ORDER BY id LIMIT 1").fetchone()[0]
        bio.add_button(conn, page["id"], first_link, None)
        replace_link_tags(conn, account_id, first_link, [("spring", "#ff8800")])
        rules = '{"rules":[{"conditions":[{"type":"os","values":["ios"]}],"url":"https://example.com/ios"}]}'
        replace_document(conn, account_id, first_link, rules, "2026-01-01T00:00:00.000Z")
        add_destination(conn, first_link, "2026-01-01T00:00:00.000Z", "https://example.com/moved", "cli")
        conn.execute("INSERT INTO link_rule_days VALUES (?, ?, 0, -1, 3)", (first_link, TODAY.isoformat()))
        conn.execute("INSERT INTO link_rule_visitors VALUES (?, ?, 0, -1, 42)", (first_link, TODAY.isoformat()))
        bio.add_views(conn, [(page["id"], TODAY.isoformat(), 3)])
        sessions.insert_session(conn, "0" * 64, account_id, int(datetime.now(UTC).timestamp() * 1000))
        # The app links' tables: an app, a link opening it, a redeemed token, a day of outcomes.
        ios = IosApp(team_id="ABCDE12345", bundle_id="com.example.app")
        app = applinks.create_app(conn, account_id, CreateApp(ios=ios), datetime.now(UTC))
        link_id = conn.execute("SELECT public_id FROM links ORDER BY id LIMIT 1").fetchone()[0]
        applinks.set_link_app(conn, account_id, link_id, SetLinkApp(app_id=app.id, deep_path="/p/1"))
        applinks_store.redeem(conn, "0" * 64, "2026-01-01T00:00:00.000Z")
        applinks_store.add_outcomes(conn, [(first_link, TODAY.isoformat(), "app", 2)])
        hooked(conn, account_id)
    finally:
        conn.close()
    return path, key, high_water


def hooked(conn, account_id: int) -> None:
    """A webhook endpoint with an event, its delivery and an attempt."""
    now = datetime.now(UTC)
    body = CreateWebhook(url="https://hooks.example.com/in", events=["link.created"])
    webhook_endpoints.create_endpoint(conn, account_id, body, now=now, allow_private=False)
    outbox.create_link(
        conn,
        account_id,
        CreateLink(original_url="https://example.com/hooked"),
        now=now,
        is_ours=lambda _host: False,
        base="https://sho.rt",
        daily_limit=10**6,
    )
    now_ms = outbox.millis(now)
    outbox.dispatch(conn, now_ms, lambda _account: "https://sho.rt")
    for due in outbox.claim(conn, now_ms, 60_000, 10, 2):
        outbox.settle(conn, due, DeliveryResult(True, 200, 12, "thanks"), now_ms)


def this_hour() -> datetime:
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0)


def answers(location: str, key: str, tmp_path) -> tuple[dict[str, object], datetime]:
    """Every analytics answer of the account and of each of its links, through the API, and the
    hour they were all asked in: a link's clicksByHour and the clicksToday… figures follow the
    clock, so answers asked in different hours may rightly differ."""
    while True:
        hour = this_hour()
        found = asked_once(location, key, tmp_path)
        if this_hour() == hour:
            return found, hour


def asked_once(location: str, key: str, tmp_path) -> dict[str, object]:
    config_file = tmp_path / "empty.toml"
    config_file.touch()
    config = load_config(
        config_file, environ={}, fetcher_enabled=False, limits_requests_per_minute=10**6, **storage_settings(location)
    )
    found: dict[str, object] = {}
    with TestClient(app=create_app(config)) as client:
        links = client.get("/api/v1/links", params={"limit": 100}, headers=bearer(key)).json()["data"]
        found["links"] = links
        for params in RANGES:
            account = client.get("/api/v1/analytics", params=params, headers=bearer(key)).json()
            found[f"account {params}"] = without_moment(account)
            for link in links:
                response = client.get(f"/api/v1/links/{link['id']}/analytics", params=params, headers=bearer(key))
                found[f"{link['shortCode']} {params}"] = without_moment(response.json())
    return found


def differences(before: object, after: object, path: str = "") -> list[str]:
    """Where two answers differ, as "path: before -> after" lines (pytest's own diff of nested
    answers stops at the top level)."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [
            line
            for key in before.keys() | after.keys()
            for line in differences(before.get(key), after.get(key), f"{path}.{key}")
        ]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            line
            for index, pair in enumerate(zip(before, after, strict=True))
            for line in differences(*pair, f"{path}[{index}]")
        ]
    return [] if before == after else [f"{path}: {json.dumps(before)[:300]} -> {json.dumps(after)[:300]}"]


def without_moment(answer: dict) -> dict:
    """A `days` range ends at the moment of the request: the one part that differs between
    two requests made seconds apart."""
    answer["data"].pop("range")
    return answer


def counts(location: str) -> dict[str, int]:
    conn = connect(location)
    try:
        return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES}
    finally:
        conn.close()


def test_a_seeded_installation_moves_to_postgresql_with_every_answer_equal(installation, postgres_server, tmp_path):
    path, key, high_water = installation
    target = postgres_server.empty_database()
    before, asked = answers(str(path), key, tmp_path)

    result = run_cli("migrate", "--to", target, "--db", str(path), check=False)
    assert result.returncode == 0, result.stderr
    assert "verified: every table holds as many rows as the source" in result.stdout
    assert counts(target) == counts(str(path))
    assert counts(target)["click_rows"] == CLICKS
    assert all(counts(target)[table] > 0 for table in TABLES), counts(target)

    after, answered = answers(target, key, tmp_path)
    while answered != asked:  # an hour turned between the two (the move takes seconds): ask both again
        before, asked = answers(str(path), key, tmp_path)
        after, answered = answers(target, key, tmp_path)
    assert after.keys() == before.keys()
    for what in before:
        assert after[what] == before[what], (what, differences(before[what], after[what]))
    assert sum(answer["data"]["totalClicks"] for what, answer in after.items() if what.startswith("account")) > 0

    conn = connect(target)
    try:  # a new link never takes the id of one deleted before the move
        created = store_link(conn, 1, "https://sho.rt", CreateLink(original_url="https://example.com/new"))
        assert conn.execute("SELECT id FROM links WHERE public_id = ?", (created.id,)).fetchone()[0] > high_water
    finally:
        conn.close()


def test_a_database_holding_data_is_refused_unless_replaced(tmp_path, postgres_server):
    # A small installation: what is refused or replaced does not depend on its size.
    path = tmp_path / "shortlink.db"
    run_cli("demo", "seed", "--email", EMAIL, "--links", "3", "--clicks", "300", "--db", str(path))
    target = postgres_server.empty_database()
    assert run_cli("migrate", "--to", target, "--db", str(path), check=False).returncode == 0
    again = run_cli("migrate", "--to", target, "--db", str(path), check=False)
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr.splitlines()[-1].startswith("shortlink: ") and "already holds data" in again.stderr
    replaced = run_cli("migrate", "--to", target, "--db", str(path), "--replace", "--json", check=False)
    assert replaced.returncode == 0, replaced.stderr
    document = json.loads(replaced.stdout)
    assert document["rows"] == counts(target) == counts(str(path))
    assert document["verified"]["accounts"] == 1 and document["verified"]["answers"] > 0


def test_bad_targets_fail_in_one_line(tmp_path, postgres_server):
    path = tmp_path / "x.db"
    connect(path).close()
    for target, message in [
        ("mysql://h/db", "--to: must be a postgresql://"),
        (f"postgresql://nobody@127.0.0.1:{postgres_server.port}/missing", "cannot connect"),
    ]:
        result = run_cli("migrate", "--to", target, "--db", str(path), check=False)
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr.startswith("shortlink: ") and result.stderr.count("\n") == 1, result.stderr
        assert message in result.stderr
