"""GET /links/{id}/analytics and GET /analytics through the real app and the real click recorder.

Every answer is compared with a recomputation from the raw `clicks` rows written
in this test, following the documented semantics.
"""

from __future__ import annotations

import random
import shutil
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from shortlink.accounts import service as accounts
from shortlink.analytics import report
from shortlink.analytics.ranges import Range
from shortlink.config import load_config
from shortlink.storage import connect
from shortlink.visits.click import Click
from shortlink.web.asgi import create_app
from tests.conftest import SHORT_HOST, bearer, storage_settings

pytestmark = pytest.mark.both_backends

DAY_MS, HOUR_MS = 86_400_000, 3_600_000
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
)
ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Mobile Safari/537.36"
)
IPAD = (
    "Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.6 Mobile/15E148 Safari/604.1"
)
WINDOWS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)
LINUX_FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0"
BOT = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"
AGENTS = [IPHONE, ANDROID, IPAD, WINDOWS, LINUX_FIREFOX]
REFERRERS = ["", "https://t.co/abc", "https://www.google.com/search?q=x", "https://news.ycombinator.com/"]
CAMPAIGNS = ["", "newsletter", "twitter"]
IPS = ["8.8.8.8", "81.2.69.160", "85.214.132.117", "133.11.0.1", "203.0.113.9", "2001:4860:4860::8888"]
HINTS = ["", "", "", "FR"]
OWNER = "owner@example.com"


def iso(ms: int) -> str:
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def day(ms: int) -> str:
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)).strftime("%Y-%m-%d")


def now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)


def make_link(client, auth, **body) -> dict:
    response = client.post(
        "/api/v1/links", headers=auth, json={"originalUrl": "https://example.com/page", "title": "Page", **body}
    )
    assert response.status_code == 201, response.text
    return response.json()["data"]


def ids_of(conn, link: dict) -> tuple[int, int]:
    row = conn.execute("SELECT id, account_id FROM links WHERE public_id = ?", (link["id"],)).fetchone()
    return row["id"], row["account_id"]


def record(client, clicks: list[Click]) -> None:
    recorder = client.app.state.services.recorder
    for click in clicks:
        recorder.record(click)
    with client.portal() as portal:
        portal.call(recorder.flush)


def random_clicks(
    rng: random.Random, link: tuple[int, int], count: int, start_ms: int, end_ms: int, bot_share: float = 0.1
) -> list[Click]:
    clicks = []
    for _ in range(count):
        bot = rng.random() < bot_share
        clicks.append(
            Click(
                link[0],
                link[1],
                rng.randrange(start_ms, end_ms + 1),
                BOT if bot else rng.choice(AGENTS),
                rng.choice(REFERRERS),
                rng.choice(CAMPAIGNS),
                rng.choice(IPS),
                rng.choice(HINTS),
                bot,
            )
        )
    return clicks


# --- the independent recomputation -----------------------------------------------------------

LABELS = {
    "device": "device",
    "browser": "browser",
    "os": "os",
    "country": "country",
    "referrer": "referrer",
    "campaign": "source",
}


def expected(rows, start_ms: int, end_ms: int, now: int) -> dict:
    humans = [row for row in rows if not row["is_bot"]]
    inside = [row for row in humans if start_ms <= row["ts"] <= end_ms]
    today = datetime.fromtimestamp(now / 1000, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    monday = today - timedelta(days=today.weekday())
    first = today.replace(day=1)

    def since(moment: datetime) -> int:
        return sum(row["ts"] >= moment.timestamp() * 1000 for row in humans)

    visitors = defaultdict(set)
    for row in inside:
        visitors[day(row["ts"])].add(row["visitor"])
    per_day = Counter(day(row["ts"]) for row in inside)
    days = []
    moment = datetime.fromtimestamp(start_ms // DAY_MS * 86_400, UTC)
    while moment.timestamp() * 1000 <= end_ms:
        days.append({"date": moment.strftime("%Y-%m-%d"), "clicks": per_day[moment.strftime("%Y-%m-%d")]})
        moment += timedelta(days=1)
    figures = {
        "range": {"from": iso(start_ms), "to": iso(end_ms)},
        "totalClicks": len(humans),
        "clicksToday": since(today),
        "clicksThisWeek": since(monday),
        "clicksThisMonth": since(first),
        "clicksInPeriod": len(inside),
        "uniqueVisitors": sum(len(hashes) for hashes in visitors.values()),
        "clicksByDay": days,
    }
    for column, label in LABELS.items():
        counts = Counter(row[column] for row in inside)
        top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:10]
        figures[f"{column}Breakdown"] = [
            {label: value, "clicks": clicks, "percentage": round(100 * clicks / len(inside), 2)}
            for value, clicks in top
        ]
    return figures


def recent(rows, codes: dict[int, str], start_ms: int, end_ms: int) -> list[dict]:
    inside = sorted(
        (row for row in rows if not row["is_bot"] and start_ms <= row["ts"] <= end_ms),
        key=lambda row: (row["ts"], row["id"]),
        reverse=True,
    )[:20]
    return [
        {
            "id": f"clk_{row['id']}",
            "shortCode": codes[row["link_id"]],
            "device": row["device"],
            "browser": row["browser"],
            "os": row["os"],
            "country": row["country"],
            "userAgent": row["user_agent"],
            "createdAt": iso(row["ts"]),
        }
        for row in inside
    ]


def hourly(rows, now: int) -> list[dict]:
    current = now // HOUR_MS
    counts = Counter(row["ts"] // HOUR_MS for row in rows if not row["is_bot"])
    return [{"hour": iso(hour * HOUR_MS), "clicks": counts[hour]} for hour in range(current - 23, current + 1)]


def link_rows(conn, link_pk: int):
    return conn.execute("SELECT * FROM clicks WHERE link_id = ?", (link_pk,)).fetchall()


def account_rows(conn, account_id: int):
    return conn.execute("SELECT * FROM clicks WHERE account_id = ?", (account_id,)).fetchall()


def get_analytics(client, path: str, auth, **params) -> tuple[dict, int]:
    """The answer and the moment it was computed (retried across an hour boundary)."""
    while True:
        before = now_ms()
        response = client.get(path, headers=auth, params=params)
        after = now_ms()
        assert response.status_code == 200, response.text
        if before // HOUR_MS == after // HOUR_MS:
            return response.json()["data"], after


def range_of(params: dict, now: int) -> tuple[int, int]:
    """What the documented rules make of the parameters used in these tests."""

    def parse(text: str, end: bool) -> int:
        if len(text) == 10:
            moment = datetime.fromisoformat(text).replace(tzinfo=UTC)
            return int((moment + timedelta(days=1 if end else 0)).timestamp() * 1000) - (1 if end else 0)
        return int(datetime.fromisoformat(text).timestamp() * 1000)

    end_ms = parse(params["to"], True) if "to" in params else None
    if "from" in params:
        return parse(params["from"], False), end_ms
    return None, end_ms


def check_link(client, conn, link: dict, auth, **params) -> dict:
    answer, now = get_analytics(client, f"/api/v1/links/{link['id']}/analytics", auth, **params)
    start_ms, end_ms = range_of(params, now)
    # "to" defaulting to now: the server's now is echoed in range.to; check it is sane, then use it.
    end_ms = end_ms if end_ms is not None else int(datetime.fromisoformat(answer["range"]["to"]).timestamp() * 1000)
    assert end_ms <= now
    if start_ms is None:
        start_ms = end_ms - int(params.get("days", 30)) * DAY_MS
    link_pk, _ = ids_of(conn, link)
    rows = link_rows(conn, link_pk)
    want = expected(rows, start_ms, end_ms, now)
    for field, value in want.items():
        assert answer[field] == value, field
    assert answer["clicksByHour"] == hourly(rows, now)
    assert answer["recentClicks"] == recent(rows, {link_pk: link["shortCode"]}, start_ms, end_ms)
    assert answer["url"] == {
        "id": link["id"],
        "shortCode": link["shortCode"],
        "originalUrl": link["originalUrl"],
        "title": link["title"],
        "platform": link["platform"],
        "isActive": link["isActive"],
        "createdAt": link["createdAt"],
    }
    return answer


def check_account(client, conn, auth, account_id: int, **params) -> dict:
    answer, now = get_analytics(client, "/api/v1/analytics", auth, **params)
    start_ms, end_ms = range_of(params, now)
    end_ms = end_ms if end_ms is not None else int(datetime.fromisoformat(answer["range"]["to"]).timestamp() * 1000)
    if start_ms is None:
        start_ms = end_ms - int(params.get("days", 30)) * DAY_MS
    rows = account_rows(conn, account_id)
    want = expected(rows, start_ms, end_ms, now)
    for field, value in want.items():
        assert answer[field] == value, field
    links = {row["id"]: row for row in conn.execute("SELECT * FROM links WHERE account_id = ?", (account_id,))}
    assert answer["totalUrls"] == len(links)
    assert answer["activeUrls"] == sum(row["is_active"] == 1 for row in links.values())
    per_link = Counter(row["link_id"] for row in rows if not row["is_bot"] and start_ms <= row["ts"] <= end_ms)
    top = sorted(per_link.items(), key=lambda item: (-item[1], links[item[0]]["short_code"]))[:10]
    assert answer["topUrls"] == [
        {
            "id": links[link_pk]["public_id"],
            "shortCode": links[link_pk]["short_code"],
            "originalUrl": links[link_pk]["original_url"],
            "title": links[link_pk]["title"] or "",
            "clicks": clicks,
            "createdAt": links[link_pk]["created_at"],
        }
        for link_pk, clicks in top
    ]
    # The account's newest clicks across its links, each named by its link's code.
    codes = {link_pk: row["short_code"] for link_pk, row in links.items()}
    assert answer["recentClicks"] == recent(rows, codes, start_ms, end_ms)
    assert "url" not in answer and "clicksByHour" not in answer
    return answer


# --- tests ------------------------------------------------------------------------------------


def seed(client, auth, conn) -> tuple[dict, dict]:
    """Two links of one account with clicks over 40 days (bots included), partial days too."""
    rng = random.Random(5)
    now = now_ms()
    first, second = make_link(client, auth), make_link(client, auth, originalUrl="https://example.org/x")
    clicks = (
        random_clicks(rng, ids_of(conn, first), 600, now - 40 * DAY_MS, now)
        + random_clicks(rng, ids_of(conn, second), 200, now - 10 * DAY_MS, now)
        + random_clicks(rng, ids_of(conn, first), 60, now - 3 * HOUR_MS, now)
    )
    record(client, clicks)
    return first, second


# Per backend: a database seeded once through the real app and recorder, and its links. Each
# test that asks for `seeded` gets a copy of it (a file copy, or PostgreSQL's CREATE DATABASE
# ... TEMPLATE) instead of recording the 860 clicks again.
SEEDED: dict[str, tuple[str, tuple[dict, dict]]] = {}


def seeded_database(backend: str, request: pytest.FixtureRequest) -> tuple[str, tuple[dict, dict]]:
    if backend not in SEEDED:
        directory: Path = request.getfixturevalue("tmp_path_factory").mktemp("seeded")
        if backend == "sqlite":
            location = str(directory / "shortlink.db")
            shutil.copyfile(request.getfixturevalue("migrated_sqlite"), location)
        else:
            location = request.getfixturevalue("postgres_server").new_database()
        config_file = directory / "shortlink.toml"
        config_file.touch()
        settings = {**storage_settings(location), "links_short_host": SHORT_HOST, "fetcher_enabled": False}
        conn = connect(location)
        try:
            # The account `auth`'s keys belong to (tests/conftest.py new_key).
            auth = bearer(accounts.create_key(conn, OWNER).key)
            with TestClient(app=create_app(load_config(config_file, environ={}, **settings))) as client:
                links = seed(client, auth, conn)
        finally:
            conn.close()
        SEEDED[backend] = (location, links)
    return SEEDED[backend]


@pytest.fixture
def storage(storage: str, backend: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """The test's database; for a test of the seeded data, a copy of the seeded one."""
    if "seeded" not in request.fixturenames:
        yield storage
        return
    template, _links = seeded_database(backend, request)
    if backend == "sqlite":
        shutil.copyfile(template, storage)
        yield storage
        return
    server = request.getfixturevalue("postgres_server")
    url = server.new_database(template=template.rsplit("/", 1)[1])
    yield url
    server.drop_database(url)


@pytest.fixture
def seeded(storage: str, backend: str, request: pytest.FixtureRequest) -> tuple[dict, dict]:
    return seeded_database(backend, request)[1]


def test_link_analytics_default_range_equals_raw_recomputation(client, auth, conn, seeded):
    answer = check_link(client, conn, seeded[0], auth)
    assert answer["clicksInPeriod"] > 0 and len(answer["clicksByDay"]) == 31
    assert {item["device"] for item in answer["deviceBreakdown"]} <= {"mobile", "tablet", "desktop", "other"}
    assert sum(item["clicks"] for item in answer["deviceBreakdown"]) == answer["clicksInPeriod"]


@pytest.mark.parametrize(
    "params",
    [
        {"days": "1"},
        {"days": "7"},
        {"days": "366"},
        {"from": "PAST5T10:30:00Z", "to": "PAST2T08:15:00.250Z"},  # partial first and last days
        {"from": "PAST5", "to": "PAST2"},  # date-only: whole days
        {"from": "PAST3T23:00:00+02:00"},  # offset, to = now
        {"to": "PAST1", "days": "3"},  # date-only to, days back from it
        {"from": "PAST9T13:00:00Z", "to": "PAST9T14:00:00Z"},  # within one day
    ],
)
def test_ranges_mid_day_and_date_only_equal_raw_recomputation(client, auth, conn, seeded, params):
    today = datetime.now(UTC).date()
    resolved = {}
    for key, value in params.items():
        for back in range(10, 0, -1):
            value = value.replace(f"PAST{back}", (today - timedelta(days=back)).isoformat())
        resolved[key] = value
    check_link(client, conn, seeded[0], auth, **resolved)
    check_account(client, conn, auth, ids_of(conn, seeded[0])[1], **resolved)


def test_fixed_windows_ignore_a_range_in_the_past(client, auth, conn, seeded):
    recent_answer = check_link(client, conn, seeded[0], auth, days="1")
    old = (datetime.now(UTC).date() - timedelta(days=100)).isoformat()
    past = check_link(client, conn, seeded[0], auth, **{"from": old, "to": old})
    assert past["clicksInPeriod"] == 0 and past["uniqueVisitors"] == 0
    assert past["deviceBreakdown"] == [] and past["recentClicks"] == []
    assert past["clicksByDay"] == [{"date": old, "clicks": 0}]
    for field in ("totalClicks", "clicksToday", "clicksThisWeek", "clicksThisMonth", "clicksByHour"):
        assert past[field] == recent_answer[field], field
    assert past["totalClicks"] > 0


def test_bots_count_in_click_count_only(client, auth, conn):
    link = make_link(client, auth)
    ids = ids_of(conn, link)
    now = now_ms()
    record(
        client,
        [
            Click(*ids, now - 1000, WINDOWS, "", "", "8.8.8.8", "", False),
            Click(*ids, now - 900, BOT, "https://www.facebook.com/", "x", "8.8.4.4", "", True),
            Click(*ids, now - 800, BOT, "", "", "8.8.4.4", "", True),
        ],
    )
    answer = check_link(client, conn, link, auth)
    assert answer["totalClicks"] == answer["clicksInPeriod"] == answer["uniqueVisitors"] == 1
    assert answer["browserBreakdown"] == [{"browser": "Chrome", "clicks": 1, "percentage": 100.0}]
    assert answer["referrerBreakdown"] == [{"referrer": "Direct", "clicks": 1, "percentage": 100.0}]
    assert answer["campaignBreakdown"] == [{"source": "None", "clicks": 1, "percentage": 100.0}]
    assert answer["countryBreakdown"] == [{"country": "US", "clicks": 1, "percentage": 100.0}]
    assert client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]["clickCount"] == 3


def test_breakdowns_cap_at_ten_with_percentages_and_ties_by_label(client, auth, conn):
    link = make_link(client, auth)
    ids = ids_of(conn, link)
    now = now_ms()
    # 12 campaigns: "c00" 3 clicks, "c01".."c11" 1 click each → 14 clicks.
    clicks = [Click(*ids, now - 5000 - i, IPHONE, "", "c00", "8.8.8.8", "", False) for i in range(3)]
    clicks += [Click(*ids, now - 1000 - i, IPHONE, "", f"c{i:02d}", "8.8.8.8", "", False) for i in range(1, 12)]
    record(client, clicks)
    answer = check_link(client, conn, link, auth)
    assert answer["campaignBreakdown"][0] == {"source": "c00", "clicks": 3, "percentage": round(300 / 14, 2)}
    assert [item["source"] for item in answer["campaignBreakdown"]] == [f"c{i:02d}" for i in range(10)]
    assert answer["uniqueVisitors"] == 1  # same IP and agent all day
    assert answer["deviceBreakdown"] == [{"device": "mobile", "clicks": 14, "percentage": 100.0}]


def test_unique_visitors_are_per_day(client, auth, conn):
    link = make_link(client, auth)
    ids = ids_of(conn, link)
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    yesterday_noon = int((today - timedelta(hours=12)).timestamp() * 1000)
    two_days_ago = int((today - timedelta(hours=36)).timestamp() * 1000)
    clicks = [
        Click(*ids, moment + i, agent, "", "", ip, "", False)
        for moment in (two_days_ago, yesterday_noon)
        for i, (agent, ip) in enumerate(
            [(IPHONE, "8.8.8.8"), (IPHONE, "8.8.8.8"), (ANDROID, "8.8.8.8"), (IPHONE, "1.1.1.1")]
        )
    ]
    record(client, clicks)
    answer = check_link(client, conn, link, auth, days="3")
    assert answer["uniqueVisitors"] == 6 and answer["clicksInPeriod"] == 8


def test_account_figures_keep_accounts_apart(client, auth, conn, new_key, seeded):
    other_auth = bearer(new_key("other@example.com"))
    other = make_link(client, other_auth)
    record(client, random_clicks(random.Random(9), ids_of(conn, other), 50, now_ms() - 5 * DAY_MS, now_ms()))
    mine = check_account(client, conn, auth, ids_of(conn, seeded[0])[1])
    theirs = check_account(client, conn, other_auth, ids_of(conn, other)[1])
    assert theirs["totalUrls"] == 1 and mine["totalUrls"] == 2
    assert {url["id"] for url in mine["topUrls"]} == {seeded[0]["id"], seeded[1]["id"]}
    assert [url["id"] for url in theirs["topUrls"]] == [other["id"]]
    response = client.get(f"/api/v1/links/{seeded[0]['id']}/analytics", headers=other_auth)
    assert response.status_code == 404 and response.json()["error"]["code"] == "NOT_FOUND"


def test_deleting_a_link_removes_it_from_account_figures(client, auth, conn, seeded):
    first, second = seeded
    account_id = ids_of(conn, first)[1]
    assert client.delete(f"/api/v1/links/{second['id']}", headers=auth).status_code == 200
    answer = check_account(client, conn, auth, account_id, days="366")
    assert [url["id"] for url in answer["topUrls"]] == [first["id"]]
    for table in ("link_days", "link_dimensions", "link_visitors"):
        assert (
            conn.execute(f"SELECT count(*) FROM {table} WHERE link_id NOT IN (SELECT id FROM links)").fetchone()[0] == 0
        )


def test_paused_link_counts_as_not_active(client, auth, conn, seeded):
    client.patch(f"/api/v1/links/{seeded[1]['id']}", headers=auth, json={"isActive": False})
    answer = check_account(client, conn, auth, ids_of(conn, seeded[0])[1])
    assert answer["totalUrls"] == 2 and answer["activeUrls"] == 1


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"days": "0"}, "days"),
        ({"days": "367"}, "days"),
        ({"days": "abc"}, "days"),
        ({"days": "1.5"}, "days"),
        ({"days": "7.0"}, "days"),
        ({"days": "1e1"}, "days"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-13-01"}, "to"),
        ({"to": "20261103"}, "to"),
        ({"to": "2026-W45"}, "to"),
        ({"from": "2026-02-10", "to": "2026-02-01"}, "from"),
        ({"from": "2024-01-01", "to": "2025-01-01"}, "from"),
    ],
)
def test_invalid_range_is_400_naming_the_parameter(client, auth, seeded, params, named):
    for path in (f"/api/v1/links/{seeded[0]['id']}/analytics", "/api/v1/analytics"):
        response = client.get(path, headers=auth, params=params)
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == "VALIDATION_ERROR" and error["message"].startswith(f"{named}: ")


def test_unknown_link_is_404(client, auth):
    response = client.get("/api/v1/links/lnk_doesnotexist/analytics", headers=auth)
    assert response.status_code == 404 and response.json()["error"]["code"] == "NOT_FOUND"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10**6),
    count=st.integers(0, 150),
    span_hours=st.integers(1, 24 * 20),
    back_hours=st.integers(0, 24 * 25),
    offset_ms=st.integers(0, HOUR_MS - 1),
)
def test_rollups_answer_like_raw_clicks_on_random_data(
    client, auth, conn, seeded, seed, count, span_hours, back_hours, offset_ms
):
    rng = random.Random(seed)
    now = now_ms()
    record(client, random_clicks(rng, ids_of(conn, seeded[1]), count, now - 30 * DAY_MS, now, bot_share=0.2))
    end = now - back_hours * HOUR_MS - offset_ms
    start = max(end - span_hours * HOUR_MS + offset_ms // 2, 0)
    params = {"from": iso(start), "to": iso(end)}
    check_link(client, conn, seeded[1], auth, **params)
    check_account(client, conn, auth, ids_of(conn, seeded[1])[1], **params)
    # The service's own raw-only computation (the benchmark's baseline) gives the same answers.
    account_id = ids_of(conn, seeded[1])[1]
    span, moment = Range(start, end), datetime.now(UTC)
    for link in seeded:
        assert report.link_analytics(
            conn, account_id, link["id"], span, moment, rollups=False
        ) == report.link_analytics(conn, account_id, link["id"], span, moment)
    assert report.account_analytics(conn, account_id, span, moment, rollups=False) == report.account_analytics(
        conn, account_id, span, moment
    )


def top_urls_via_api(client, auth, **params) -> list[tuple[str, int]]:
    response = client.get("/api/v1/analytics", params=params, headers=auth)
    assert response.status_code == 200, response.text
    return [(url["shortCode"], url["clicks"]) for url in response.json()["data"]["topUrls"]]


def human_click(link: tuple[int, int], ts: int) -> Click:
    return Click(link[0], link[1], ts, AGENTS[0], "", "", "203.0.113.9", "", False)


def test_top_urls_when_the_all_time_leaders_were_quiet_in_the_range(client, auth, conn):
    # Links are tried by all-time clicks; the leader here has none in the last week.
    now = now_ms()
    links = [make_link(client, auth, customCode=f"top{number:02d}") for number in range(15)]
    clicks = [human_click(ids_of(conn, links[0]), now - 20 * DAY_MS) for _ in range(100)]
    for number, link in enumerate(links[1:], start=1):
        clicks += [human_click(ids_of(conn, link), now - 3 * DAY_MS) for _ in range(number)]
    record(client, clicks)
    expected_top = [(f"top{number:02d}", number) for number in range(14, 4, -1)]
    assert top_urls_via_api(client, auth, days=7) == expected_top
    assert top_urls_via_api(client, auth, days=30)[0] == ("top00", 100)


def test_top_urls_with_more_tied_links_than_are_tried_one_by_one(make_client, auth, conn):
    # 210 links with one click each: every link ties, so all are summed; ties go by code.
    client = make_client(limits_requests_per_minute=100_000)
    now = now_ms()
    links = [make_link(client, auth, customCode=f"tie{number:03d}") for number in range(210)]
    record(client, [human_click(ids_of(conn, link), now - 2 * DAY_MS) for link in links])
    assert top_urls_via_api(client, auth, days=7) == [(f"tie{number:03d}", 1) for number in range(10)]


@pytest.mark.parametrize(
    ("start_hour", "end_hour", "in_range", "visitors"),
    [
        (10, 24 + 23, 3, 3),  # first day has a click before 10:00: raw; nothing after on the last day
        (7, 21, 3, 2),  # one day, no click outside: the day's rollup is the range's figures
        (9, 21, 2, 2),  # one day, a click outside: raw
        (0, 24 + 10, 4, 3),  # whole first day, second day up to 10:00 with nothing after its click
        (13, 24 + 8, 1, 1),  # only the 20:00 click; the next day's click is after the end
    ],
)
def test_partial_days_are_exact_with_or_without_clicks_outside_the_range(
    client, auth, conn, start_hour, end_hour, in_range, visitors
):
    link = make_link(client, auth)
    link_pk, account_id = ids_of(conn, link)
    base = (now_ms() // DAY_MS - 3) * DAY_MS
    # (hour from `base`, IP): the 08:00 and 20:00 clicks are the same visitor.
    moments = [(8, "8.8.8.8"), (12, "81.2.69.160"), (20, "8.8.8.8"), (24 + 9, "8.8.8.8")]
    record(
        client,
        [Click(link_pk, account_id, base + hour * HOUR_MS, IPHONE, "", "", ip, "", False) for hour, ip in moments],
    )
    params = {"from": iso(base + start_hour * HOUR_MS), "to": iso(base + end_hour * HOUR_MS)}
    for answer in (
        check_link(client, conn, link, auth, **params),
        check_account(client, conn, auth, account_id, **params),
    ):
        assert answer["clicksInPeriod"] == in_range and answer["uniqueVisitors"] == visitors


@pytest.fixture
def unlimited_client(make_client) -> TestClient:
    """The app without the API's rate limit: a property test asks more than 60 answers a minute."""
    return make_client(limits_requests_per_minute=100_000)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10**6),
    count=st.integers(0, 60),
    start_s=st.integers(0, 4 * 86_400),
    span_s=st.integers(0, 3 * 86_400),
)
def test_any_range_to_the_second_answers_like_raw_clicks(
    unlimited_client, auth, conn, seeded, seed, count, start_s, span_s
):
    # Clicks over the last four days on both links, visitors coming back within and across hours
    # (six addresses), and a range from any second to any second: within one hour, one day or
    # across days, so every mix of daily rollups, hourly rollups and raw partial hours is read.
    rng = random.Random(seed)
    now = now_ms()
    window = now - 4 * DAY_MS
    for link in seeded:
        record(unlimited_client, random_clicks(rng, ids_of(conn, link), count, window, now, bot_share=0.2))
    start = window + start_s * 1000
    end = min(start + span_s * 1000, now)
    params = {"from": iso(min(start, end)), "to": iso(end)}
    for link in seeded:
        check_link(unlimited_client, conn, link, auth, **params)
    check_account(unlimited_client, conn, auth, ids_of(conn, seeded[0])[1], **params)
