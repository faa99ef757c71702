"""Helpers shared by test modules (test modules never import each other)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime

from litestar.testing import TestClient

from shortlink.app.hosts import Hosts
from shortlink.links import service
from shortlink.links.schema import CreateLink, Link

# User agents of the visitors the tests play.
DESKTOP = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
)
ANDROID_CHROME = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.6778.81 Mobile Safari/537.36"
)
ANDROID_FIREFOX = "Mozilla/5.0 (Android 14; Mobile; rv:132.0) Gecko/132.0 Firefox/132.0"
INSTAGRAM_IOS = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Mobile/15E148 Instagram 339.0.3.12.91 (iPhone14,5; iOS 17_5; "
    "en_US; en; scale=3.00; 1170x2532; 618947271)"
)
SAMSUNG = (
    "Mozilla/5.0 (Linux; Android 12; SM-G991B) AppleWebKit/537.36 (KHTML, like Gecko) "
    "SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36"
)
FACEBOOK_ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.83 Mobile Safari/537.36 "
    "[FB_IAB/FB4A;FBAV/488.0.0.62.79;IABMV/1;]"
)
FACEBOOK_BOT = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"


def store_link(
    conn: sqlite3.Connection, account_id: int, short_host: str, body: CreateLink, *, fetch_title: bool = False
) -> Link:
    """A link stored through the same rules as every door, on a plain connection."""
    hosts = Hosts(short_host)
    return service.create_link(
        conn,
        account_id,
        body,
        is_ours=hosts.is_ours,
        base=hosts.base_for_account(account_id),
        daily_limit=10**9,
        now=datetime.now(UTC),
        fetch_title=fetch_title,
    )


def wait_for(condition: Callable[[], bool], timeout: float = 10.0, what: str = "the condition") -> None:
    """Poll until `condition()` holds (generously bounded: never a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.05)


def wait_for_domain(client: TestClient, host: str, timeout: float = 5.0) -> None:
    """A domain connected by another process (the CLI) reaches the server within a second."""
    hosts = client.app.state.services.hosts
    deadline = time.monotonic() + timeout
    while not hosts.is_ours(host):
        assert time.monotonic() < deadline, f"the server never noticed {host}"
        time.sleep(0.05)
