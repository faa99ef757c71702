"""The click recorder over a real database file: batching, overflow, draining, failures, privacy."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from shortlink.accounts import service as accounts
from shortlink.analytics import report
from shortlink.analytics.ranges import Range, to_ms
from shortlink.config import ClicksConfig
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.storage import connect
from shortlink.storage.sqlite import SqliteDatabase
from shortlink.visits.click import Click
from shortlink.visits.recorder import ClickRecorder
from shortlink.wiring import forget_raw_clicks
from tests.support.helpers import store_link, wait_for_async
from tests.support.load import assert_rollups_match_raw_clicks

UA = "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0"
DAY_MS = 86_400_000


@pytest.fixture
def links(db_path) -> list[tuple[int, int]]:
    """Two links of one account: (link id, account id)."""
    conn = connect(db_path)
    accounts.create_key(conn, "rec@example.com")
    account_id = conn.execute("SELECT id FROM accounts").fetchone()[0]
    made = []
    for _ in range(2):
        link = store_link(
            conn, account_id, "https://sho.rt", CreateLink(original_url="https://example.com/x", title="t")
        )
        made.append(
            (conn.execute("SELECT id FROM links WHERE short_code = ?", (link.short_code,)).fetchone()[0], account_id)
        )
    conn.close()
    return made


@pytest.fixture
async def database(db_path):
    db = SqliteDatabase(db_path)
    yield db
    db.close()


def click(link: tuple[int, int], ts: int | None = None, ip: str = "8.8.8.8", bot: bool = False) -> Click:
    return Click(
        link[0], link[1], ts if ts is not None else int(time.time() * 1000), UA, "https://t.co/x", "news", ip, "", bot
    )


def count(db_path, sql: str) -> int:
    conn = connect(db_path)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


async def test_each_batch_is_one_transaction(database, db_path, links):
    recorder = ClickRecorder(database, ClicksConfig(batch_size=100, flush_interval_ms=60_000))
    statements: list[str] = []
    await database.write(lambda conn: conn.set_trace_callback(statements.append))
    now = int(time.time() * 1000)
    for number in range(250):
        recorder.record(click(links[number % 2], ts=now + number))  # no two batches alike
    assert await recorder.flush() == 250
    await database.write(lambda conn: conn.set_trace_callback(None))
    # One statement outside BEGIN per batch (its trigger writes every table): each is one
    # transaction of its own.
    writes = {statement for statement in statements if statement.startswith(("INSERT", "UPDATE", "DELETE"))}
    assert len(writes) == 3 and all(statement.startswith("INSERT INTO click_batches ") for statement in writes)
    assert not any(statement.startswith(("BEGIN", "SAVEPOINT", "COMMIT")) for statement in statements)
    assert recorder.written == 250 and recorder.pending == 0
    assert count(db_path, "SELECT count(*) FROM clicks") == 250
    assert count(db_path, "SELECT sum(click_count) FROM links") == 250
    assert count(db_path, "SELECT sum(clicks) FROM link_days") == 250


async def test_each_batch_counts_in_sql_exactly_what_its_raw_rows_hold(database, db_path, links):
    """Batches mixing links, days, visitors, agents, bots and unknown labels: every rollup and
    counter the writer aggregates in SQL equals a recount of the raw clicks."""
    phone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1"
    yesterday = int(time.time() * 1000) - DAY_MS
    recorder = ClickRecorder(database, ClicksConfig(batch_size=7, flush_interval_ms=60_000))
    for number in range(60):
        link = links[number % 2]
        ts = yesterday if number % 3 == 0 else None
        agent, referrer, campaign = (phone, "", "") if number % 4 == 0 else (UA, "https://t.co/x", "news")
        ip = f"8.8.4.{number % 5}"
        recorder.record(
            Click(link[0], link[1], ts or int(time.time() * 1000), agent, referrer, campaign, ip, "", False)
        )
        if number % 10 == 0:
            recorder.record(click(link, bot=True))
    assert await recorder.flush() == 66
    conn = connect(db_path)
    try:
        assert_rollups_match_raw_clicks(conn)
        assert conn.execute("SELECT count(*) FROM clicks WHERE is_bot = 1").fetchone()[0] == 6
        assert conn.execute("SELECT sum(clicks) FROM account_days").fetchone()[0] == 60
        # Unknown labels (no referrer, no campaign) have no rows; the others count once per click.
        assert conn.execute("SELECT count(*) FROM link_dimensions WHERE value IN ('Direct', 'None')").fetchone()[0] == 0
        assert (
            conn.execute(
                "SELECT sum(clicks) FROM account_dimensions WHERE dimension = 6 AND value = 'news'"
            ).fetchone()[0]
            == 45
        )
        assert conn.execute("SELECT count(*) FROM user_agents WHERE text IN (?, ?)", (UA, phone)).fetchone()[0] == 2
    finally:
        conn.close()


async def written(recorder: ClickRecorder, count: int, seconds: float = 10) -> None:
    """Wait for the writer task to have stored `count` clicks and taken them off its queue
    (generous: the suite's other servers may load the machine). Both: the store counts
    them a loop iteration before the flush that awaited it takes them off the queue."""
    await wait_for_async(lambda: (recorder.written, recorder.pending) == (count, 0), seconds, f"{count} clicks written")


async def test_the_writer_task_flushes_on_its_own_when_a_batch_is_full(database, db_path, links):
    recorder = ClickRecorder(database, ClicksConfig(batch_size=50, flush_interval_ms=60_000))
    await recorder.start()
    for _ in range(50):
        recorder.record(click(links[0]))
    await written(recorder, 50)
    assert count(db_path, "SELECT count(*) FROM clicks") == 50
    await recorder.stop()


async def test_full_queue_drops_and_counts_without_blocking(database, db_path, links):
    recorder = ClickRecorder(database, ClicksConfig(queue_size=10, batch_size=1000, flush_interval_ms=60_000))
    started = time.perf_counter()
    for _ in range(25):
        recorder.record(click(links[0]))
    assert time.perf_counter() - started < 0.05
    assert recorder.pending == 10 and recorder.dropped == 15
    await recorder.flush()
    assert count(db_path, "SELECT count(*) FROM clicks") == 10


async def test_stop_writes_everything_queued(database, db_path, links):
    recorder = ClickRecorder(database, ClicksConfig(batch_size=7, flush_interval_ms=60_000))
    await recorder.start()
    for _ in range(40):
        recorder.record(click(links[1]))
    await recorder.stop()
    assert recorder.pending == 0 and count(db_path, "SELECT count(*) FROM clicks") == 40


async def test_clicks_of_a_deleted_link_are_dropped_without_failing_the_batch(database, db_path, links):
    recorder = ClickRecorder(database, ClicksConfig())
    for link in links * 3:
        recorder.record(click(link))
    conn = connect(db_path)
    conn.execute("DELETE FROM links WHERE id = ?", (links[1][0],))
    conn.close()
    await recorder.flush()
    assert recorder.pending == 0 and recorder.written == 3
    assert count(db_path, "SELECT count(*) FROM clicks") == 3
    assert count(db_path, f"SELECT count(*) FROM clicks WHERE link_id = {links[0][0]}") == 3


async def test_a_failing_write_keeps_the_batch_for_the_next_tick(database, db_path, links, caplog):
    recorder = ClickRecorder(database, ClicksConfig(flush_interval_ms=20))
    conn = connect(db_path)
    conn.execute("ALTER TABLE click_rows RENAME TO clicks_away")  # a real failure of the writer's INSERT
    await recorder.start()
    for _ in range(5):
        recorder.record(click(links[0]))
    await wait_for_async(lambda: caplog.text.count("could not write 5 queued clicks") >= 2, 10, "two failed writes")
    assert (recorder.pending, recorder.written) == (5, 0)  # failed, kept, task still alive
    conn.execute("ALTER TABLE clicks_away RENAME TO click_rows")
    conn.close()
    await written(recorder, 5)
    await recorder.stop()
    assert count(db_path, "SELECT count(*) FROM clicks") == 5
    assert count(db_path, f"SELECT click_count FROM links WHERE id = {links[0][0]}") == 5


async def test_no_raw_ip_and_no_visitor_key_is_ever_written(db_path, links):
    now = time.time()
    database = SqliteDatabase(db_path)
    recorder = ClickRecorder(database, ClicksConfig(), clock=lambda: now)
    ips = ["203.0.113.77", "2001:db8:1234::77", "198.51.100.201"]
    for ip in ips:
        recorder.record(click(links[0], ip=ip))
        recorder.record(click(links[0], ts=int(now * 1000) - 30 * DAY_MS, ip=ip))  # an old day
    await recorder.flush()
    keys = list(recorder._day_keys.values())
    await recorder.stop()
    database.close()
    data = b"".join(path.read_bytes() for path in db_path.parent.glob(db_path.name + "*"))
    for ip in ips:
        assert ip.encode() not in data
        assert ip.encode("utf-16-le") not in data
    assert keys and not any(key in data or key.hex().encode() in data for key in keys)
    assert count(db_path, "SELECT count(DISTINCT visitor) FROM clicks") == 6


def hashes(db_path) -> list[str]:
    conn = connect(db_path)
    try:
        return [row[0] for row in conn.execute("SELECT visitor FROM clicks ORDER BY id")]
    finally:
        conn.close()


async def test_a_days_key_is_gone_once_the_day_can_receive_no_more_clicks(database, db_path, links):
    midnight = 1_795_392_000  # 2026-11-23 00:00 UTC
    clock = [midnight - 60.0]
    recorder = ClickRecorder(database, ClicksConfig(batch_size=1, flush_interval_ms=10), clock=lambda: clock[0])

    def visit(at: float) -> None:
        recorder.record(click(links[0], ts=int(at * 1000)))

    visit(midnight - 60)
    await recorder.flush()
    assert list(recorder._day_keys) == ["2026-11-22"]
    # Past midnight, a click stamped before it is still queued: its day keeps its key
    # until that click is written, then only the new day's key is left.
    visit(midnight - 1)
    clock[0] = midnight + 1
    visit(midnight + 1)
    await recorder.flush()
    assert list(recorder._day_keys) == ["2026-11-23"]
    first, late, next_day = hashes(db_path)
    assert late == first  # one visitor, one day: one hash
    assert next_day != first  # another day, another key
    # An idle writer forgets too: nothing queued, the clock past the day.
    clock[0] = midnight + 86_400 + 1
    await recorder.start()
    await wait_for_async(lambda: not recorder._day_keys, 10, "the day's keys to be forgotten")
    await recorder.stop()
    assert recorder._day_keys == {}


async def test_clicks_arriving_during_a_flush_are_written_exactly_once(database, db_path, links):
    # The flush enriches the next batch while the current one is stored; clicks keep
    # arriving meanwhile, as they do under load.
    recorder = ClickRecorder(database, ClicksConfig(batch_size=100, flush_interval_ms=60_000))
    for _ in range(150):
        recorder.record(click(links[0]))
    arrivals = 0

    async def visitors():
        nonlocal arrivals
        while arrivals < 400:
            recorder.record(click(links[1]))
            arrivals += 1
            await asyncio.sleep(0)

    producer = asyncio.create_task(visitors())
    while arrivals < 400:
        await recorder.flush()
    await producer
    await recorder.flush()
    assert recorder.pending == 0 and recorder.written == 550
    assert count(db_path, "SELECT count(*) FROM clicks") == 550
    assert count(db_path, f"SELECT count(*) FROM clicks WHERE link_id = {links[1][0]}") == 400
    assert count(db_path, "SELECT sum(click_count) FROM links") == 550


async def test_clicks_queued_for_a_deleted_link_never_reach_the_next_link_created(database, db_path, links):
    # The deleted link has the highest id: the id SQLite would hand out again.
    recorder = ClickRecorder(database, ClicksConfig(flush_interval_ms=60_000))
    for _ in range(3):
        recorder.record(click(links[1]))
    conn = connect(db_path)
    deleted = conn.execute("SELECT public_id FROM links WHERE id = ?", (links[1][0],)).fetchone()[0]
    service.delete_link(conn, links[1][1], deleted)
    other = accounts.create_key(conn, "other@example.com")
    other_account = accounts.account_for(conn, other.email)["id"]
    created = store_link(conn, other_account, "https://sho.rt", CreateLink(original_url="https://example.com/new"))
    new_id = conn.execute("SELECT id FROM links WHERE public_id = ?", (created.id,)).fetchone()[0]
    conn.close()
    assert new_id > links[1][0]
    await recorder.flush()
    await recorder.stop()
    assert count(db_path, f"SELECT click_count FROM links WHERE id = {new_id}") == 0
    assert count(db_path, "SELECT count(*) FROM clicks") == 0


async def test_raw_retention_deletes_old_clicks_and_changes_no_analytics_answer(database, db_path, links):
    now = time.time()
    now_ms = int(now * 1000)
    recorder = ClickRecorder(database, ClicksConfig(), clock=lambda: now)
    await recorder.start()
    for days_ago, ip in ((400, "1.1.1.1"), (400, "2.2.2.2"), (390, "1.1.1.1"), (3, "3.3.3.3"), (0, "4.4.4.4")):
        recorder.record(click(links[0], ts=now_ms - days_ago * DAY_MS, ip=ip))
    await recorder.stop()
    at = datetime.fromtimestamp(now, UTC)
    old_range = Range(to_ms(at - timedelta(days=420)) // DAY_MS * DAY_MS, to_ms(at - timedelta(days=380)))
    ranges = [old_range, Range(now_ms - 366 * DAY_MS + 1, now_ms), Range(now_ms - 30 * DAY_MS + 1, now_ms)]

    def answers(conn):
        return [report.account_analytics(conn, links[0][1], span, at) for span in ranges]

    before = await database.read(answers)
    assert before[0].total_clicks == 5 and before[0].unique_visitors == 3  # two visitors on day -400, one on -390
    assert await forget_raw_clicks(database, 367, now) == 3
    assert count(db_path, "SELECT count(*) FROM clicks") == 2
    after = await database.read(answers)
    # Whole old days come from the rollups: every figure stays. Only the recent-clicks list
    # of a range older than the retention is empty: it lists clicks, and those are gone.
    assert [msgspec.structs.replace(answer, recent_clicks=[]) for answer in after] == [
        msgspec.structs.replace(answer, recent_clicks=[]) for answer in before
    ]
    assert len(before[0].recent_clicks) == 3 and after[0].recent_clicks == []
    assert after[1:] == before[1:]  # ranges of `days` (at most 366) change in nothing


async def test_stop_ends_the_writer_even_when_a_click_wakes_it_at_that_moment(database, links):
    # A click waking the idle writer in the same turn of the loop as stop() cancelling it: on
    # Python 3.11, asyncio.wait_for returned the wake-up and dropped the cancel, and stop()
    # waited for the writer forever (a test's app shutdown hung that way).
    recorder = ClickRecorder(database, ClicksConfig(batch_size=1, flush_interval_ms=60_000))
    await recorder.start()
    await asyncio.sleep(0.05)  # a pause, not a wait: the writer has started waiting for work by then (no hook shows it)
    recorder.record(click(links[0]))  # a full batch: wakes it
    stopping = asyncio.create_task(recorder.stop())
    done, _ = await asyncio.wait({stopping}, timeout=30)  # milliseconds when it works; 60 s when not
    assert stopping in done and recorder.written == 1
