"""Real clients loading a real server's /l/<code>, and the check that every rollup equals
a recomputation from raw clicks: for tests of server processes under load."""

from __future__ import annotations

import http.client
import sqlite3
import threading
import time

from shortlink.storage.clicks import DIMENSIONS
from shortlink.storage.labels import UNKNOWN

# (user agent, referrer, query): desktop, phones and a bot, with and without a campaign,
# so that the rollups of every dimension have several values to get right.
VISITS = [
    (
        "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
        "https://news.ycombinator.com/item?id=1",
        "?utm_source=hn",
    ),
    (
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/18.1 Mobile/15E148 Safari/604.1",
        "",
        "",
    ),
    (
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Mobile Safari/537.36",
        "https://t.co/abc",
        "?utm_source=twitter",
    ),
    ("Twitterbot/1.0", "", ""),
]


class Load:
    """Clients hammering /l/<code> with a mix of visitors, noting when each redirect was received."""

    def __init__(self, port: int, code: str, clients: int = 4):
        self.port, self.path = port, f"/l/{code}"
        self.acknowledged_at: list[float] = []
        self.running = True
        self.threads = [threading.Thread(target=self.client, args=(number,), daemon=True) for number in range(clients)]
        for thread in self.threads:
            thread.start()

    @property
    def acknowledged(self) -> int:
        return len(self.acknowledged_at)

    def client(self, number: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        sent = number
        while self.running:
            user_agent, referrer, query = VISITS[sent % len(VISITS)]
            sent += 1
            try:
                conn.request("GET", self.path + query, headers={"User-Agent": user_agent, "Referer": referrer})
                response = conn.getresponse()
                response.read()
            except (OSError, http.client.HTTPException):
                return
            if response.status == 302:
                self.acknowledged_at.append(time.monotonic())  # list.append is atomic

    def stop(self) -> int:
        self.running = False
        for thread in self.threads:
            thread.join(timeout=10)
        return self.acknowledged


def day_of_ts(conn: sqlite3.Connection) -> str:
    """SQL for the UTC day ('YYYY-MM-DD') of a click's ts, in the connection's dialect."""
    if isinstance(conn, sqlite3.Connection):
        return "date(ts / 1000, 'unixepoch')"
    return "to_char(to_timestamp(ts / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"


def rollups_and_raw(conn: sqlite3.Connection) -> list[tuple[str, list, list]]:
    """(what, rows of the rollup table, the same rows recomputed from raw clicks), per table."""
    day = day_of_ts(conn)

    def rows(sql: str) -> list:
        return sorted(tuple(row) for row in conn.execute(sql))

    grouped = "AS d GROUP BY 1, 2, 3, 4"
    # The unknown label of each dimension has no rows of its own (storage.labels).
    raw_dimensions = " UNION ALL ".join(
        f"SELECT link_id, account_id, {code} AS dimension, {day} AS day, {column} AS value FROM clicks"
        f" WHERE is_bot = 0 AND {column} <> '{UNKNOWN[column]}'"
        for code, column in enumerate(DIMENSIONS, start=1)
    )
    return [
        (
            "link_days",
            rows("SELECT link_id, day, clicks, visitors FROM link_days WHERE clicks > 0"),
            rows(
                f"SELECT link_id, {day}, count(*), count(DISTINCT visitor) FROM clicks WHERE is_bot = 0 GROUP BY 1, 2"
            ),
        ),
        (
            "account_days",
            rows("SELECT account_id, day, clicks, visitors FROM account_days WHERE clicks > 0"),
            rows(
                f"SELECT account_id, {day}, count(*), count(DISTINCT visitor) FROM clicks"
                " WHERE is_bot = 0 GROUP BY 1, 2"
            ),
        ),
        (
            "link_dimensions",
            rows("SELECT link_id, dimension, day, value, clicks FROM link_dimensions"),
            rows(f"SELECT link_id, dimension, day, value, count(*) FROM ({raw_dimensions}) {grouped}"),
        ),
        (
            "account_dimensions",
            rows("SELECT account_id, dimension, day, value, clicks FROM account_dimensions"),
            rows(
                f"SELECT account_id, dimension, day, value, count(*) FROM ({raw_dimensions}) AS d GROUP BY 1, 2, 3, 4"
            ),
        ),
        (
            "click_count",
            rows("SELECT id, click_count FROM links"),
            rows("SELECT l.id, count(c.id) FROM links l LEFT JOIN clicks c ON c.link_id = l.id GROUP BY 1"),
        ),
    ]


def assert_rollups_match_raw_clicks(conn: sqlite3.Connection) -> None:
    for what, rolled_up, raw in rollups_and_raw(conn):
        assert rolled_up == raw, what
