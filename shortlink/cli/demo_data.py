"""Realistic demo data: links and clicks, written through the real click recorder.

The clicks go through `ClickRecorder` exactly as visits do (user-agent parsing,
geolocation of the sample IPs, visitor hashing, rollups), only with past
timestamps, so the analytics endpoints show what a live account would see.
Deterministic for a given seed.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime

import msgspec

from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.cli.progress import progress
from shortlink.config import Config
from shortlink.errors import ValidationError
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.stopping import StopRequest
from shortlink.storage import Database, open_database
from shortlink.storage import accounts as account_store
from shortlink.storage import links as link_store
from shortlink.visits.click import Click
from shortlink.visits.countries import open_table
from shortlink.visits.recorder import ClickRecorder

DAY_MS = 86_400_000
DEMO_BATCH_SIZE = 25_000
DEMO_CHUNK = DEMO_BATCH_SIZE  # Ctrl-C waits for at most two chunks to be written
# What `demo seed` accepts: at least one link to click on, at least one day to click in.
BOUNDS = {"links": (1, 10_000_000), "clicks": (0, 10_000_000), "days": (1, 3650)}

DESTINATIONS = [
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
    "https://www.instagram.com/p/C0ffee/",
    "https://x.com/python/status/1",
    "https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC",
    "https://www.amazon.com/dp/B08N5WRWNW",
    "https://apps.apple.com/app/id389801252",
    "https://play.google.com/store/apps/details?id=com.spotify.music",
    "https://www.reddit.com/r/Python/",
    "https://www.linkedin.com/company/python-software-foundation/",
    "https://github.com/litestar-org/litestar",
    "https://docs.python.org/3/whatsnew/3.13.html",
    "https://example.com/spring-sale",
]

# (weight, user agent): phones dominate short-link traffic; a few bots and previewers.
USER_AGENTS = [
    (
        30,
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/18.1 Mobile/15E148 Safari/604.1",
    ),
    (
        25,
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Mobile Safari/537.36",
    ),
    (
        8,
        "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
        "SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
    ),
    (
        6,
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Mobile/15E148 Instagram 340.0.0.22.109 (iPhone15,2; iOS 17_6; en_US; en; scale=3.00; 1179x2556)",
    ),
    (
        15,
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Safari/537.36",
    ),
    (
        6,
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/18.1 Safari/605.1.15",
    ),
    (4, "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0"),
    (
        3,
        "Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/17.6 Mobile/15E148 Safari/604.1",
    ),
    (2, "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"),
    (1, "Twitterbot/1.0"),
    (1, "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"),
]
REFERRERS = [
    (35, ""),
    (20, "https://t.co/"),
    (15, "https://www.instagram.com/"),
    (10, "https://www.google.com/"),
    (8, "https://www.facebook.com/"),
    (7, "https://news.ycombinator.com/item?id=1"),
    (5, "https://www.reddit.com/r/Python/"),
]
CAMPAIGNS = [(50, ""), (20, "newsletter"), (15, "twitter"), (10, "instagram"), (5, "podcast")]
# Public addresses of well-known networks in several countries, for the offline geolocation.
SAMPLE_IPS = [
    (30, "8.8.8.8"),
    (12, "81.2.69.160"),
    (10, "85.214.132.117"),
    (8, "193.51.224.6"),
    (8, "133.11.0.1"),
    (6, "200.160.2.3"),
    (6, "1.1.1.1"),
    (5, "203.2.218.214"),
    (5, "196.4.160.2"),
    (10, ""),
]


class SeedResult(msgspec.Struct):
    links: int
    clicks: int
    bots: int
    interrupted: bool = False  # Ctrl-C: what is counted here was written, the rest was not started


def _draw(rng: random.Random, weighted: list[tuple[int, str]], count: int) -> list[str]:
    """`count` values drawn by weight, in one call (drawing one by one dominated seeding)."""
    return rng.choices([value for _, value in weighted], weights=[weight for weight, _ in weighted], k=count)


def _first_day_ms(now_ms: int, days: int) -> int:
    """00:00 UTC of the first of the last `days` days (today is the last): where
    `click_times` begins."""
    return now_ms - now_ms % DAY_MS - (days - 1) * DAY_MS


def click_times(rng: random.Random, now_ms: int, days: int, count: int) -> Iterator[list[int]]:
    """`count` moments in the last `days` days, busier in the evening and on more
    recent days, oldest first, in lists of at most DEMO_CHUNK.

    Oldest first like live traffic, so the clicks of a day sit together in the
    table as they would in a real database."""
    # Days back drawn from an exponential cut off at `days` (inverse CDF): clamping
    # instead would pile the whole tail, about 8% of the clicks, onto the oldest day.
    rate = 2.5 / days
    tail = 1 - math.exp(-rate * days)
    per_day = Counter(min(int(-math.log(1 - rng.random() * tail) / rate), days - 1) for _ in range(count))
    today = now_ms - now_ms % DAY_MS
    chunk: list[int] = []
    for back in range(days - 1, -1, -1):
        day_start = today - back * DAY_MS
        moments = []
        for _ in range(per_day[back]):
            hour = min(max(rng.gauss(19, 4), 0), 23.999)
            moment = day_start + int(hour * 3_600_000)
            # Today's evening has not happened yet: such clicks fall in the part that has.
            moments.append(moment if moment <= now_ms else day_start + rng.randrange(now_ms - day_start + 1))
        chunk.extend(sorted(moments))
        while len(chunk) >= DEMO_CHUNK:
            yield chunk[:DEMO_CHUNK]
            chunk = chunk[DEMO_CHUNK:]
    if chunk:
        yield chunk


def demo_clicks(rng: random.Random, targets: list[tuple[int, int]], times: list[int]) -> list[Click]:
    """Clicks at `times` over `targets` (link id, account id), Zipf-like per link."""
    count = len(times)
    weights = [1 / (rank + 1) for rank in range(len(targets))]
    user_agents = _draw(rng, USER_AGENTS, count)
    ips = [ip or f"192.0.2.{rng.randrange(1, 255)}" for ip in _draw(rng, SAMPLE_IPS, count)]
    return [
        Click(
            link_pk,
            account_id,
            ts,
            user_agent,
            referrer,
            campaign,
            ip,
            "",
            not user_agent.startswith("Mozilla/5.0 (") or "Googlebot" in user_agent,
        )
        for (link_pk, account_id), ts, user_agent, referrer, campaign, ip in zip(  # noqa: B905
            rng.choices(targets, weights=weights, k=count),
            times,
            user_agents,
            _draw(rng, REFERRERS, count),
            _draw(rng, CAMPAIGNS, count),
            ips,
        )
    ]


async def seed(
    config: Config,
    email: str,
    links: int,
    clicks: int,
    days: int = 30,
    seed_value: int = 7,
    stop: StopRequest | None = None,
) -> SeedResult:
    """Create `links` (at least 1) demo links for the account and record `clicks` clicks
    on them over the last `days` (at least 1) days, reporting progress on stderr.

    The links are dated at the start of that period, before their first click, as
    links that had been there all along. A count out of BOUNDS is a ValidationError
    naming the command's option. When `stop` is requested the work ends between two
    links or two chunks of clicks: everything counted in the result is written."""
    stop = stop if stop is not None else StopRequest()
    for name, value in (("links", links), ("clicks", clicks), ("days", days)):
        low, high = BOUNDS[name]
        if not low <= value <= high:
            raise ValidationError(f"--{name}", f"must be from {low} to {high:,}")
    rng = random.Random(seed_value)
    db = open_database(config.storage.location)
    # Bigger batches than live traffic: more clicks fold into each rollup row per write.
    recorder = ClickRecorder(
        db,
        msgspec.structs.replace(config.clicks, batch_size=DEMO_BATCH_SIZE, queue_size=2 * DEMO_CHUNK),
        countries=open_table(config.geoip.path),
    )
    try:
        if await db.write(account_store.account_by_email, email) is None:
            await db.write(accounts.create_key, email)
        account = await db.write(accounts.account_for, email)
        hosts = Hosts(config.short_host)
        now_ms = int(time.time() * 1000)
        created = datetime.fromtimestamp(_first_day_ms(now_ms, days) / 1000, UTC)
        targets: list[tuple[int, int]] = []
        with progress("demo seed", links, "links") as made_links:
            while len(targets) < links and not stop.requested:
                targets.append(await _demo_link(db, hosts, account["id"], len(targets), created, links))
                made_links.advance()
        made = bots = 0
        await recorder.start()
        with progress("demo seed", clicks if targets else 0, "clicks") as recorded:
            # In chunks: ten million clicks don't fit in memory at once.
            for times in click_times(rng, now_ms, days, clicks if targets else 0):
                if stop.requested:
                    break
                # The recorder's own task writes while the next chunk is drawn; the queue
                # holds two chunks, so waiting for one to drain means no click is dropped.
                while recorder.pending > DEMO_CHUNK:
                    await asyncio.sleep(0.005)
                chunk = demo_clicks(rng, targets, times)
                for click in chunk:
                    recorder.record(click)
                made += len(chunk)
                bots += sum(click.is_bot for click in chunk)
                recorded.advance(len(chunk))
        await recorder.stop()  # writes every queued click: the counted ones are all stored
        return SeedResult(links=len(targets), clicks=made, bots=bots, interrupted=stop.requested)
    finally:
        db.close()


async def _demo_link(
    db: Database, hosts: Hosts, account_id: int, number: int, created: datetime, links: int
) -> tuple[int, int]:
    """Demo link number `number`, as (link id, account id)."""
    destination = DESTINATIONS[number % len(DESTINATIONS)]
    link = await db.write(
        service.create_link,
        account_id,
        CreateLink(original_url=destination, title=f"Demo {number + 1}: {destination.split('/')[2]}"),
        is_ours=hosts.is_ours,
        base=hosts.short_host,
        daily_limit=links + 10**6,
        now=created,
        fetch_title=False,
        source=None,
    )
    row = await db.write(link_store.link_by_code, link.short_code)
    assert row is not None, "created just now"
    return row["id"], account_id
