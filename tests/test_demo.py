"""`shortlink demo seed`: realistic clicks through the real recorder."""
from __future__ import annotations

import random
import time
from collections import Counter

from shortlink.demo import DAY_MS, _click_times
from tests.conftest import run_cli


def test_demo_seed_writes_links_and_enriched_clicks_over_the_days(db_path, conn):
    result = run_cli("demo", "seed", "--email", "demo@example.com", "--links", "4", "--clicks", "800",
                     "--days", "10", "--db", str(db_path))
    assert "seeded 4 links and 800 clicks" in result.stdout
    links = conn.execute("SELECT id, click_count FROM links").fetchall()
    assert len(links) == 4 and sum(row["click_count"] for row in links) == 800
    rows = conn.execute("SELECT * FROM clicks").fetchall()
    assert len(rows) == 800
    now_ms = time.time() * 1000
    assert all(now_ms - 10 * 86_400_000 - 60_000 <= row["ts"] <= now_ms for row in rows)
    assert len({row["ts"] // 86_400_000 for row in rows}) >= 5          # spread over the days
    assert 0 < sum(row["is_bot"] for row in rows) < 100                 # a few bots and previewers
    assert {row["device"] for row in rows} >= {"mobile", "desktop"}
    assert len({row["country"] for row in rows}) >= 4                    # geolocated sample IPs
    assert len({row["campaign"] for row in rows}) >= 3
    # The most clicked link gets more than the least clicked one (Zipf-like popularity).
    counts = sorted(row["click_count"] for row in links)
    assert counts[-1] > 2 * counts[0]


def test_demo_seed_creates_the_account_and_rejects_bad_numbers(db_path, conn):
    assert run_cli("demo", "seed", "--email", "new@example.com", "--links", "1", "--clicks", "0",
                   "--db", str(db_path)).returncode == 0
    assert conn.execute("SELECT count(*) FROM accounts WHERE email = 'new@example.com'").fetchone()[0] == 1
    bad = run_cli("demo", "seed", "--email", "new@example.com", "--links", "1", "--clicks", "-5",
                  "--db", str(db_path), check=False)
    assert bad.returncode == 1 and "--clicks" in bad.stderr and "Traceback" not in bad.stderr



def test_demo_click_times_come_in_order_and_thin_out_smoothly_to_the_oldest_day():
    now = 1_790_000_000_000
    days = 30
    times = [moment for chunk in _click_times(random.Random(3), now, days, 60_000) for moment in chunk]
    assert len(times) == 60_000 and times == sorted(times)          # oldest first, like live traffic
    today = now // DAY_MS
    per_day = Counter(today - ts // DAY_MS for ts in times)
    assert set(per_day) == set(range(days)) and all(ts <= now for ts in times)
    # More recent days are busier, and the oldest day is no pile-up of the older tail.
    assert per_day[1] > per_day[15] > per_day[days - 1]
    assert per_day[days - 1] < 1.3 * per_day[days - 2]
