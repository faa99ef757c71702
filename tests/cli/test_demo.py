"""`shortlink demo seed`: realistic clicks through the real recorder."""

from __future__ import annotations

import random
import time
from collections import Counter
from datetime import UTC, datetime

import pytest

from shortlink.cli.demo_data import DAY_MS, click_times
from shortlink.times import from_iso
from tests.conftest import run_cli

pytestmark = pytest.mark.slow


def test_demo_seed_writes_links_and_enriched_clicks_over_the_days(db_path, conn):
    result = run_cli(
        "demo",
        "seed",
        "--email",
        "demo@example.com",
        "--links",
        "4",
        "--clicks",
        "800",
        "--days",
        "10",
        "--db",
        str(db_path),
    )
    assert "seeded 4 links and 800 clicks" in result.stdout
    links = conn.execute("SELECT id, click_count FROM links").fetchall()
    assert len(links) == 4 and sum(row["click_count"] for row in links) == 800
    rows = conn.execute("SELECT * FROM clicks").fetchall()
    assert len(rows) == 800
    now_ms = time.time() * 1000
    assert all(now_ms - 10 * 86_400_000 - 60_000 <= row["ts"] <= now_ms for row in rows)
    assert len({row["ts"] // 86_400_000 for row in rows}) >= 5  # spread over the days
    assert 0 < sum(row["is_bot"] for row in rows) < 100  # a few bots and previewers
    assert {row["device"] for row in rows} >= {"mobile", "desktop"}
    assert len({row["country"] for row in rows}) >= 4  # geolocated sample IPs
    assert len({row["campaign"] for row in rows}) >= 3
    # The most clicked link gets more than the least clicked one (Zipf-like popularity).
    counts = sorted(row["click_count"] for row in links)
    assert counts[-1] > 2 * counts[0]
    # The links were there before their clicks: dated 00:00 UTC of the first of the 10 days.
    first_day = datetime.fromtimestamp((now_ms // DAY_MS - 9) * 86_400, UTC)
    for link in conn.execute("SELECT created_at, updated_at FROM links"):
        assert from_iso(link["created_at"]) == from_iso(link["updated_at"]) == first_day
    assert min(row["ts"] for row in rows) >= first_day.timestamp() * 1000


def test_demo_seed_creates_the_account(db_path, conn):
    assert (
        run_cli(
            "demo",
            "seed",
            "--email",
            "new@example.com",
            "--links",
            "1",
            "--clicks",
            "0",
            "--days",
            "1",
            "--db",
            str(db_path),
        ).returncode
        == 0
    )
    assert conn.execute("SELECT count(*) FROM accounts WHERE email = 'new@example.com'").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 1


@pytest.mark.parametrize(
    ("links", "clicks", "days", "named"),
    [
        ("0", "10", "30", "--links"),  # clicks with nothing to click on
        ("1", "-5", "30", "--clicks"),
        ("1", "10", "0", "--days"),
    ],
)
def test_demo_seed_rejects_bad_numbers_in_one_line_without_writing(db_path, links, clicks, days, named):
    bad = run_cli(
        "demo",
        "seed",
        "--email",
        "new@example.com",
        "--links",
        links,
        "--clicks",
        clicks,
        "--days",
        days,
        "--db",
        str(db_path),
        check=False,
    )
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith(f"shortlink: {named}: must be from ") and bad.stderr.count("\n") == 1
    assert not db_path.exists()


def test_demo_click_times_come_in_order_and_thin_out_smoothly_to_the_oldest_day():
    now = 1_790_000_000_000
    days = 30
    times = [moment for chunk in click_times(random.Random(3), now, days, 60_000) for moment in chunk]
    assert len(times) == 60_000 and times == sorted(times)  # oldest first, like live traffic
    today = now // DAY_MS
    per_day = Counter(today - ts // DAY_MS for ts in times)
    assert set(per_day) == set(range(days)) and all(ts <= now for ts in times)
    # More recent days are busier, and the oldest day is no pile-up of the older tail.
    assert per_day[1] > per_day[15] > per_day[days - 1]
    assert per_day[days - 1] < 1.3 * per_day[days - 2]
