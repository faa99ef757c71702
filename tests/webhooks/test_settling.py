"""A round's settling on both backends: an endpoint deleted by its account while the round was
sending to it loses its attempts, and every other account's are recorded as they came."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.fetcher.addresses import address_policy
from shortlink.links.schema import CreateLink
from shortlink.storage import open_database
from shortlink.storage import webhooks as store
from shortlink.webhooks import endpoints, outbox
from shortlink.webhooks.deliverer import LEASE_SECONDS, Deliverer
from shortlink.webhooks.events import CreateWebhook
from shortlink.webhooks.secrets import secret_of, webhook_key
from tests.conftest import SHORT_HOST
from tests.support.helpers import serve_in_background
from tests.support.receiver import running_receiver

pytestmark = pytest.mark.both_backends

KEY = webhook_key(b"k" * 32)


class Held:
    """A receiver that holds every request until `release` is set, then answers 500 to the
    event of a link whose URL has "fail" in it and 200 to the others."""

    def __init__(self) -> None:
        self.arrived = 0
        self.both_arrived = threading.Event()
        self.release = threading.Event()
        self.url = ""


@contextmanager
def held_receiver() -> Iterator[Held]:
    held = Held()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            with lock:
                held.arrived += 1
                if held.arrived == 2:
                    held.both_arrived.set()
            held.release.wait(60)
            status, answer = (500, b"broke") if b"/fail" in body else (200, b"thanks")
            self.send_response(status)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    serve_in_background(server)
    held.url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
    try:
        yield held
    finally:
        held.release.set()
        server.shutdown()
        server.server_close()


def make_link(conn, account_id: int, url: str, hosts: Hosts):
    body = CreateLink(original_url=url)
    now = datetime.now(UTC)
    return outbox.create_link(conn, account_id, body, now=now, is_ours=hosts.is_ours, base=SHORT_HOST, daily_limit=100)


async def test_an_endpoint_deleted_mid_round_never_resends_another_accounts_events(storage, conn):
    hosts = Hosts(SHORT_HOST)
    first = accounts.ensure_account(conn, "first@example.com")["id"]
    second = accounts.ensure_account(conn, "second@example.com")["id"]
    now = datetime.now(UTC)
    with held_receiver() as held, running_receiver() as receiver:
        doomed = endpoints.create_endpoint(
            conn, first, CreateWebhook(url=held.url, events=["link.created"]), now=now, allow_private=True
        )
        kept = endpoints.create_endpoint(
            conn, second, CreateWebhook(url=receiver.url, events=["link.created"]), now=now, allow_private=True
        )
        receiver.secrets.append(secret_of(KEY, kept["secret_nonce"]))
        # Two links of the first account: one answered 200, one 500 (a success and a failure to drop).
        make_link(conn, first, "https://example.com/fine", hosts)
        make_link(conn, first, "https://example.com/fail", hosts)
        link = make_link(conn, second, "https://example.com/second", hosts)

        clock = [time.time()]
        db = open_database(storage)
        deliverer = Deliverer(
            db, webhook_key=KEY, base_for=hosts.base_for_account, policy=address_policy(True), clock=lambda: clock[0]
        )
        await deliverer.start()
        try:
            round_ = asyncio.create_task(deliverer.run_once())
            assert await asyncio.to_thread(held.both_arrived.wait, 60), "the first account's two requests"
            # The round is sending to the first account's endpoint: its account deletes it now.
            endpoints.delete_endpoint(conn, first, doomed["public_id"])
            held.release.set()
            assert await round_ == 3 + 3  # three events fanned out, three deliveries sent and settled
            assert receiver.count() == 1 and receiver.verified_events()[0]["data"]["id"] == link.id

            log = endpoints.attempts(conn, second, kept["public_id"], 10, None)
            assert [(entry.ok, entry.delivery_state) for entry in log] == [(True, "succeeded")]
            # Past the claims' lease, nothing is due again: the second account's event went once.
            clock[0] += LEASE_SECONDS + 60
            while await deliverer.run_once():
                pass
            assert receiver.count() == 1 and held.arrived == 2
            assert store.pending_delivery_count(conn) == 0
        finally:
            await deliverer.stop()
            db.close()
