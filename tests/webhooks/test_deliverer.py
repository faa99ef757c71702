"""The deliverer on a real SQLite file against a real receiver on 127.0.0.1, with a clock the
test moves: retries on the backoff schedule, the disable after 3 days of failures, a receiver
that is slow, redirects or never stops answering, refused addresses, secret rotation, expiry
events and the 30-day log."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.fetcher.addresses import IPAddress, OwnServiceResolver, address_policy
from shortlink.links import tags as tagging
from shortlink.links.schema import CreateLink, UpdateLink
from shortlink.links.tags import TagInput
from shortlink.storage import clicks as click_store
from shortlink.storage import connect, transaction
from shortlink.storage import links as link_store
from shortlink.storage import webhooks as store
from shortlink.storage.clicks import StoredClick
from shortlink.storage.sqlite import SqliteDatabase
from shortlink.webhooks import endpoints, outbox, policy
from shortlink.webhooks.deliverer import LEASE_SECONDS, Deliverer
from shortlink.webhooks.events import CreateWebhook, Replay, UpdateWebhook
from shortlink.webhooks.secrets import secret_of, webhook_key
from tests.conftest import SHORT_HOST
from tests.support.helpers import wait_for_async
from tests.support.receiver import Receiver, running_receiver

KEY = webhook_key(b"k" * 32)
DAY = 86400.0


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


class Setup:
    def __init__(self, db: SqliteDatabase, conn, clock: Clock, receiver: Receiver, account_id: int):
        self.db, self.conn, self.clock, self.receiver, self.account_id = db, conn, clock, receiver, account_id
        self.hosts = Hosts(SHORT_HOST)
        self.deliverer: Deliverer | None = None
        self.webhooks: list[str] = []  # the endpoints' ids, in the order made

    def start(self, **options) -> Deliverer:
        self.deliverer = Deliverer(
            self.db,
            webhook_key=KEY,
            base_for=self.hosts.base_for_account,
            policy=address_policy(options.pop("allow_private", True)),
            clock=self.clock,
            **options,
        )
        return self.deliverer

    def endpoint(self, events: list[str], **fields) -> str:
        body = CreateWebhook(url=self.receiver.url, events=events, **fields)
        row = endpoints.create_endpoint(self.conn, self.account_id, body, now=datetime.now(UTC), allow_private=True)
        self.receiver.secrets.append(secret_of(KEY, row["secret_nonce"]))
        self.webhooks.append(row["public_id"])
        return row["public_id"]

    def link(self, url: str = "https://example.com/", **fields):
        return outbox.create_link(
            self.conn,
            self.account_id,
            CreateLink(original_url=url, **fields),
            now=datetime.fromtimestamp(self.clock.now, UTC),
            is_ours=self.hosts.is_ours,
            base=SHORT_HOST,
            daily_limit=10**6,
        )

    def attempts(self, webhook_id: str) -> list:
        return endpoints.attempts(self.conn, self.account_id, webhook_id, 100, None)


@pytest.fixture
async def setup(tmp_path: Path, receiver: Receiver) -> AsyncIterator[Setup]:
    path = tmp_path / "shortlink.db"
    conn = connect(path)
    db = SqliteDatabase(path)
    account_id = accounts.ensure_account(conn, "owner@example.com")["id"]
    made = Setup(db, conn, Clock(), receiver, account_id)
    yield made
    if made.deliverer is not None:
        await made.deliverer.stop()
    db.close()
    conn.close()


async def drain(deliverer: Deliverer) -> None:
    while await deliverer.run_once():
        pass


async def test_failures_are_retried_on_the_schedule_then_fail_and_disable_the_endpoint(setup: Setup):
    receiver = setup.receiver
    receiver.mode = "fail"
    deliverer = setup.start()
    await deliverer.start()  # its client; the rounds are run by hand, on the test's clock
    webhook = setup.endpoint(["link.created"])
    link = setup.link()
    await drain(deliverer)
    assert receiver.count() == 1
    # Nothing more until the first backoff step has passed.
    setup.clock.advance(policy.BACKOFF_SECONDS[0] - 1)
    await drain(deliverer)
    assert receiver.count() == 1
    setup.clock.advance(1)
    await drain(deliverer)
    assert receiver.count() == 2
    # Each retry comes after its step of the schedule, until 3 days after the first failure.
    for step in policy.BACKOFF_SECONDS[1:] + (policy.BACKOFF_SECONDS[-1],) * 20:
        setup.clock.advance(step)
        await drain(deliverer)
    log = setup.attempts(webhook)
    assert all(entry.status == 500 and entry.response == "receiver broke" and not entry.ok for entry in log)
    assert log[0].delivery_state == "failed" and log[0].event_id == receiver.received[0].headers["webhook-id"]
    # The first attempt, the schedule's steps within 3 days, and a last one when they are over.
    assert len(log) == receiver.count() == 1 + 5 + 6 + 1
    # Every attempt was the same event, signed anew each time.
    assert {item.headers["webhook-id"] for item in receiver.received} == {log[0].event_id}
    shown = endpoints.list_endpoints(setup.conn, setup.account_id, int(setup.clock.now * 1000))[0]
    assert shown.is_enabled is False and shown.disabled_reason and "failing" in shown.disabled_reason
    assert shown.failing_since is not None

    # A disabled endpoint's new events wait; re-enabled, they and a replay of the failed one go out.
    setup.clock.now = time.time()  # back to now: the receiver's library checks the timestamp
    outbox.update_link(
        setup.conn, setup.account_id, link.id, UpdateLink(title="Later"), now=datetime.now(UTC), base=SHORT_HOST
    )
    await drain(deliverer)
    assert receiver.count() == 13
    receiver.mode = "ok"
    endpoints.update_endpoint(
        setup.conn,
        setup.account_id,
        webhook,
        UpdateWebhook(events=["link.created", "link.updated"], is_enabled=True),
        now=datetime.now(UTC),
        allow_private=True,
    )
    replayed_at = datetime.fromtimestamp(setup.clock.now, UTC)
    assert endpoints.replay(setup.conn, setup.account_id, webhook, Replay(failed=True), replayed_at) == 1
    await drain(deliverer)
    # Only the replay: link.updated was written while the endpoint did not subscribe to it.
    assert receiver.count() == 14 and receiver.received[-1].verified_by
    assert receiver.received[-1].event["type"] == "link.created"
    assert receiver.received[-1].event["data"]["id"] == link.id
    revived = endpoints.list_endpoints(setup.conn, setup.account_id, int(setup.clock.now * 1000))[0]
    assert revived.is_enabled and revived.failing_since is None and revived.disabled_reason is None

    # The log and the events are forgotten after 30 days.
    assert store.event_count(setup.conn) == 1
    setup.clock.advance(31 * DAY)
    setup.start()  # a fresh deliverer sweeps the old log on its first round
    await drain(setup.deliverer)
    assert setup.attempts(webhook) == [] and store.event_count(setup.conn) == 0


@pytest.mark.slow
async def test_slow_redirecting_endless_and_refused_answers_are_failures_that_cost_little(setup: Setup):
    receiver = setup.receiver
    deliverer = setup.start(timeout=1.0)
    await deliverer.start()
    webhook = setup.endpoint(["link.created"])
    outcomes = {}
    for mode in ("slow", "redirect", "huge"):
        receiver.mode, receiver.delay = mode, 3.0
        started = time.monotonic()
        setup.link()
        await drain(deliverer)
        outcomes[mode] = (setup.attempts(webhook)[0], time.monotonic() - started)
    slow, slow_took = outcomes["slow"]
    assert slow.status is None and not slow.ok and slow.response == "no answer within 1 s" and slow_took < 2.5
    redirect, _ = outcomes["redirect"]
    assert redirect.status == 302 and not redirect.ok
    assert redirect.response == "redirect not followed (Location: http://127.0.0.1:9/elsewhere)"
    assert receiver.count() == 3  # the redirect's target was never asked
    # An endless answer is read only up to the cap: a success as soon as its status came.
    huge, huge_took = outcomes["huge"]
    assert huge.status == 200 and huge.ok and huge.response == "x" * 512 and huge_took < 1.0

    # Without allow_private_addresses, the receiver's loopback address is refused at connection time.
    refusing = setup.start(allow_private=False)
    await refusing.start()
    setup.link()
    await drain(refusing)
    await refusing.stop()
    refused = setup.attempts(webhook)[0]
    assert refused.status is None and "non-public address 127.0.0.1" in refused.response
    assert receiver.count() == 3


async def test_a_rotation_signs_with_both_secrets_during_the_overlap_only(setup: Setup):
    receiver = setup.receiver
    deliverer = setup.start()
    await deliverer.start()
    webhook = setup.endpoint(["link.created"])
    old = receiver.secrets[0]
    rotated = endpoints.rotate_secret(setup.conn, setup.account_id, webhook, 3600, datetime.now(UTC))
    new = secret_of(KEY, rotated["secret_nonce"])
    receiver.secrets.append(new)
    setup.link()
    await drain(deliverer)
    assert receiver.received[-1].verified_by == [old, new]
    assert len(receiver.received[-1].headers["webhook-signature"].split(" ")) == 2
    # Overlap 0: the old secret stops at once.
    rotated = endpoints.rotate_secret(setup.conn, setup.account_id, webhook, 0, datetime.now(UTC))
    newest = secret_of(KEY, rotated["secret_nonce"])
    receiver.secrets.append(newest)
    setup.link()
    await drain(deliverer)
    assert receiver.received[-1].verified_by == [newest]


async def test_expiry_events_come_once_and_limits_by_link_or_tag_hold(setup: Setup):
    deliverer = setup.start()
    await deliverer.start()
    everything = setup.endpoint(["link.expired", "link.created", "link.updated"])
    now = datetime.now(UTC)
    outbox.emit_expired(setup.conn, now, setup.hosts.base_for_account)  # the first sweep sets its mark
    soon = setup.link("https://example.com/soon", expires_at=(now + timedelta(minutes=1)).isoformat())
    later = setup.link("https://example.com/later", expires_at=(now + timedelta(hours=2)).isoformat())
    await drain(deliverer)
    limited_to_soon = setup.endpoint(["link.expired", "link.updated"], link_ids=[soon.id])
    tagged = setup.endpoint(["link.expired", "link.updated"], tags=["spring"])
    tagging.set_link_tags(setup.conn, setup.account_id, later.id, [TagInput(name="spring")])
    for link in (soon, later):
        outbox.update_link(setup.conn, setup.account_id, link.id, UpdateLink(title="T"), now=now, base=SHORT_HOST)
    assert outbox.emit_expired(setup.conn, now + timedelta(minutes=2), setup.hosts.base_for_account) == 1
    assert outbox.emit_expired(setup.conn, now + timedelta(minutes=3), setup.hosts.base_for_account) == 0
    await drain(deliverer)

    def seen(webhook: str) -> list[tuple[str, str]]:
        by_id = {item.headers["webhook-id"]: item.event for item in setup.receiver.received if item.verified_by}
        return [(entry.event_type, by_id[entry.event_id]["data"]["id"]) for entry in reversed(setup.attempts(webhook))]

    # Each link's events in order (different links' may interleave).
    delivered = seen(everything)
    assert [event for event in delivered if event[1] == soon.id] == [
        ("link.created", soon.id),
        ("link.updated", soon.id),
        ("link.expired", soon.id),
    ]
    assert [event for event in delivered if event[1] == later.id] == [
        ("link.created", later.id),
        ("link.updated", later.id),
    ]
    assert seen(limited_to_soon) == [("link.updated", soon.id), ("link.expired", soon.id)]
    assert seen(tagged) == [("link.updated", later.id)]
    # Ids begin with the event's time in milliseconds (docs/webhooks.md).
    for item in setup.receiver.received:
        created_ms = int(datetime.fromisoformat(item.event["timestamp"]).timestamp() * 1000)
        assert item.headers["webhook-id"][:16] == f"evt_{created_ms:012x}"


async def test_a_rolled_back_change_leaves_no_event(setup: Setup):
    deliverer = setup.start()
    await deliverer.start()
    setup.endpoint(["link.created"])
    with pytest.raises(RuntimeError), transaction(setup.conn):
        setup.link("https://example.com/rolled-back")
        assert store.waiting_event_count(setup.conn) == 1  # written with the link...
        raise RuntimeError("the change fails after its event was written")
    assert store.waiting_event_count(setup.conn) == 0  # ...and gone with it
    await drain(deliverer)
    assert setup.receiver.count() == 0


async def test_a_claim_holds_while_its_round_sends_and_lapses_once_its_deliverer_is_gone(setup: Setup):
    """A round longer than the lease keeps its claims (renewed as it sends); a deliverer that
    ends mid-round (a killed process) renews no more, and its claims go to another deliverer
    LEASE_SECONDS after its last renewal."""
    receiver = setup.receiver
    deliverer = setup.start(renew_seconds=0.1)
    await deliverer.start()
    setup.endpoint(["link.created"])
    receiver.mode, receiver.delay = "slow", 1.0
    setup.link("https://example.com/second")
    round_ = asyncio.create_task(deliverer.run_once())
    await wait_for_async(lambda: receiver.count() > 0, 10, "the second link's event to be sent")
    claimed_until = setup.clock.now * 1000 + LEASE_SECONDS * 1000
    setup.clock.advance(LEASE_SECONDS - 1)
    await asyncio.sleep(0.3)  # a pause, not a wait: a renewal or more at the moved clock (none shows)
    later = int(claimed_until + 1000)  # past the first lease, within the renewed one
    assert await setup.db.write(outbox.claim, later, 1000, 10, 10) == []
    assert await round_ == 2  # the event fanned out, then sent
    assert receiver.count() == 1 and deliverer.sent == 1

    setup.link("https://example.com/third")
    round_ = asyncio.create_task(deliverer.run_once())
    await wait_for_async(lambda: receiver.count() > 1, 10, "the third link's event to be sent")
    round_.cancel()  # the deliverer is gone mid-send: no answer recorded, no renewal
    with pytest.raises(asyncio.CancelledError):
        await round_
    gone_at = setup.clock.now * 1000
    assert await setup.db.write(outbox.claim, int(gone_at + LEASE_SECONDS * 1000 - 100), 1000, 10, 10) == []
    taken = await setup.db.write(outbox.claim, int(gone_at + LEASE_SECONDS * 1000), 1000, 10, 10)
    assert [row["event_public_id"] for row in taken] == [receiver.received[-1].headers["webhook-id"]]


async def test_a_receiver_down_for_an_hour_then_up_gets_every_event_once_in_order_per_link(setup: Setup):
    """An hour's outage, on the test's clock: for an hour three links are clicked (the click
    recorder's batch statement) and changed while the receiver first refuses connections, then
    answers 500; then it is up and the clock goes on through the retry schedule."""
    receiver = setup.receiver
    receiver.clock = setup.clock  # signatures checked at the test's time, not the wall clock's
    deliverer = setup.start()
    await deliverer.start()
    setup.endpoint(["link.created", "link.updated", "link.paused", "link.resumed", "link.clicked"])
    receiver.down()
    links = [setup.link(f"https://example.com/{number}") for number in range(3)]
    rows = [link_store.link_of_account(setup.conn, setup.account_id, link.id) for link in links]

    def clicks(*batch: tuple[int, int]) -> None:
        """(link index, is_bot) each, at the clock's time, in one batch as the recorder writes it."""
        ts = int(setup.clock.now * 1000)
        stored = [
            StoredClick(
                rows[index]["id"],
                setup.account_id,
                ts,
                "2026-01-01",
                "mobile",
                "Firefox",
                "Android",
                "DE",
                "news.example.com",
                "",
                "UA",
                1,
                is_bot,
            )
            for index, is_bot in batch
        ]
        click_store.write_batch(setup.conn, click_store.encode_batch(stored), with_events=True)

    for minute in range(60):
        if minute == 30:  # up again, but broken
            receiver.mode = "fail"
            receiver.up()
        clicks((minute % 3, 0), ((minute + 1) % 3, 0), (minute % 3, 1), (minute % 3, 0))
        link = links[minute % 3]
        if minute % 7 == 0:
            patch = UpdateLink(title=f"Minute {minute}")
            outbox.update_link(
                setup.conn,
                setup.account_id,
                link.id,
                patch,
                now=datetime.fromtimestamp(setup.clock.now, UTC),
                base=SHORT_HOST,
            )
        if minute % 11 == 5:
            for active in (False, True):
                outbox.update_link(
                    setup.conn,
                    setup.account_id,
                    link.id,
                    UpdateLink(is_active=active),
                    now=datetime.fromtimestamp(setup.clock.now, UTC),
                    base=SHORT_HOST,
                )
        await drain(deliverer)
        setup.clock.advance(60)
    assert receiver.count() > 0 and not [item for item in receiver.received if item.mode == "ok"]
    receiver.mode = "ok"
    for _step in range(24):  # up to 6 hours, a quarter of an hour at a time: the backoff's steps pass
        await drain(deliverer)
        if store.pending_delivery_count(setup.conn) == 0:
            break
        setup.clock.advance(900)
    assert store.pending_delivery_count(setup.conn) == 0

    events = setup.conn.execute("SELECT public_id, link_id, type FROM webhook_events ORDER BY id").fetchall()
    link_of = {event["public_id"]: event["link_id"] for event in events}
    kinds = [event["type"] for event in events]
    # 3 human clicks a minute (the bot's never), 9 updates, 5 pauses and resumes, the creations.
    assert kinds.count("link.clicked") == 180 and kinds.count("link.updated") == 9
    assert kinds.count("link.paused") == kinds.count("link.resumed") == 5 and kinds.count("link.created") == 3
    accepted = [item for item in receiver.received if item.mode == "ok"]
    assert all(item.verified_by for item in receiver.received)
    first_arrival = list(dict.fromkeys(item.headers["webhook-id"] for item in accepted))
    # Every event, once after deduplication by id...
    assert sorted(first_arrival) == sorted(link_of)
    # ...each link's in the order they were created...
    for row in rows:
        created = [event["public_id"] for event in events if event["link_id"] == row["id"]]
        assert [event_id for event_id in first_arrival if link_of[event_id] == row["id"]] == created
    # ...and never one sent (even to fail) before the link's earlier events were accepted.
    done: set[str] = set()
    for item in receiver.received:
        event_id = item.headers["webhook-id"]
        earlier = [event["public_id"] for event in events if event["link_id"] == link_of[event_id]]
        assert set(earlier[: earlier.index(event_id)]) <= done
        if item.mode == "ok":
            done.add(event_id)
    clicked = next(item.event for item in accepted if item.event["type"] == "link.clicked")
    assert clicked["data"]["click"]["country"] == "DE" and clicked["data"]["link"]["id"] in {link.id for link in links}


async def test_this_service_is_refused_by_its_names_their_addresses_and_its_listening_port(setup: Setup):
    """A receiver whose name resolves to an address of one of our hosts (on its port, or any
    port for a host given without one), or that is our listening port, is refused when the
    connection would be opened; another port of the same address is not ours."""
    receiver = setup.receiver
    port = int(receiver.url.rsplit(":", 1)[1].split("/")[0])
    names = {"hooks.example": "127.0.0.1", "short.example": "127.0.0.1"}

    async def resolve(host: str, _port: int) -> list[IPAddress]:
        if host not in names:
            raise OSError(f"no such name {host}")
        return [ipaddress.ip_address(names[host])]

    body = CreateWebhook(url=f"http://hooks.example:{port}/hooks", events=["link.created"])
    row = endpoints.create_endpoint(setup.conn, setup.account_id, body, now=datetime.now(UTC), allow_private=True)
    receiver.secrets.append(secret_of(KEY, row["secret_nonce"]))
    cases = [
        ({"short.example"}, None, "refused: hooks.example resolves to 127.0.0.1, an address of this service itself"),
        ({"short.example:1"}, None, "thanks"),  # the same address, another port: not ours
        ({f"short.example:{port}"}, None, "refused: hooks.example resolves to 127.0.0.1"),
        (set(), ("0.0.0.0", port), "refused: hooks.example resolves to 127.0.0.1"),  # listening everywhere
        (set(), ("127.0.0.1", port + 1 if port < 65535 else port - 1), "thanks"),
    ]
    for hosts, listen, expected in cases:
        own = OwnServiceResolver(lambda hosts=hosts: hosts, resolve, listen=listen)
        deliverer = setup.start(resolve=resolve, own=own)
        await deliverer.start()
        setup.link()
        await drain(deliverer)
        await deliverer.stop()
        assert setup.attempts(row["public_id"])[0].response.startswith(expected), (hosts, listen)
    assert receiver.count() == 2 and all(item.verified_by for item in receiver.received)


async def test_a_links_events_go_in_order_over_one_kept_alive_connection(setup: Setup):
    with running_receiver(keep_alive=True) as receiver:
        setup.receiver = receiver
        deliverer = setup.start()
        await deliverer.start()
        setup.endpoint(["link.created", "link.updated"])
        link = setup.link()
        for number in range(20):
            patch = UpdateLink(title=f"Title {number}")
            outbox.update_link(setup.conn, setup.account_id, link.id, patch, now=datetime.now(UTC), base=SHORT_HOST)
        await drain(deliverer)
        assert receiver.types() == ["link.created"] + ["link.updated"] * 20
        assert [event["data"]["title"] for event in receiver.verified_events()[1:]] == [
            f"Title {number}" for number in range(20)
        ]
        assert deliverer.connections_opened == 1
        assert {item.headers["host"] for item in receiver.received} == {receiver.url.split("/")[2]}
        # A chunked answer is read to its end (the log keeps it whole), and the connection kept;
        # an answer that is not HTTP is a failure, and its connection is dropped.
        for mode in ("chunked", "garbage"):
            receiver.mode = mode
            outbox.update_link(
                setup.conn, setup.account_id, link.id, UpdateLink(title=mode), now=datetime.now(UTC), base=SHORT_HOST
            )
            await drain(deliverer)
        chunked, garbage = reversed(setup.attempts(setup.webhooks[0])[:2])
        assert chunked.ok and chunked.status == 200 and chunked.response == "thanks"
        assert not garbage.ok and garbage.status is None
        assert garbage.response.startswith("not a valid HTTP/1.1 answer: Expected HTTP/")
        assert deliverer.connections_opened == 1 and receiver.count() == 23
