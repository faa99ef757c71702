"""This service is never a webhook's receiver, even where private addresses are allowed: a server
listening on every interface is reached on its port at every loopback address (127.0.0.0/8,
::1, IPv4-mapped) and at every address of the machine's interfaces; one listening on loopback,
at every loopback address. Each case is a real delivery attempt to a real listening socket."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.fetcher.addresses import OwnServiceResolver, address_policy, system_resolver
from shortlink.links.schema import CreateLink
from shortlink.storage import connect
from shortlink.storage.sqlite import SqliteDatabase
from shortlink.webhooks import endpoints, outbox
from shortlink.webhooks.deliverer import Deliverer
from shortlink.webhooks.events import CreateWebhook
from shortlink.webhooks.secrets import webhook_key
from tests.conftest import SHORT_HOST
from tests.support.helpers import serve_in_background

KEY = webhook_key(b"k" * 32)


class Counting:
    def __init__(self) -> None:
        self.hosts: list[str] = []  # the Host header of each request that arrived
        self.lock = threading.Lock()
        self.port = 0


@contextmanager
def listening_everywhere() -> Iterator[Counting]:
    """A receiver on every interface, IPv4 and IPv6 (a dual-stack socket on ::)."""
    counting = Counting()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            with counting.lock:
                counting.hosts.append(self.headers.get("host", ""))
            self.send_response(200)
            self.send_header("Content-Length", "6")
            self.end_headers()
            self.wfile.write(b"thanks")

    class Server(ThreadingHTTPServer):
        address_family = socket.AF_INET6

        def server_bind(self) -> None:
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            super().server_bind()

    server = Server(("::", 0), Handler)
    server.daemon_threads = True
    serve_in_background(server)
    counting.port = server.server_address[1]
    try:
        yield counting
    finally:
        server.shutdown()
        server.server_close()


def interface_addresses() -> list[str]:
    """The machine's global addresses as iproute2 lists them (not as the code under test reads them)."""
    listed = json.loads(
        subprocess.run(["ip", "-j", "addr", "show", "scope", "global"], capture_output=True, check=True).stdout
    )
    found = [info["local"] for link in listed for info in link.get("addr_info", []) if info.get("local")]
    assert found, "this test needs a network interface with a global address"
    return found


def url_host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


async def test_every_loopback_and_interface_address_at_our_listening_port_is_refused(tmp_path: Path):
    path = tmp_path / "shortlink.db"
    conn = connect(path)
    db = SqliteDatabase(path)
    hosts = Hosts(SHORT_HOST)
    account_id = accounts.ensure_account(conn, "owner@example.com")["id"]
    with listening_everywhere() as receiver:
        port = receiver.port
        targets = ["127.0.0.2", "[::ffff:127.0.0.2]", "127.1.2.3", "[::1]", *map(url_host, interface_addresses())]
        made = {}
        for host in targets:
            body = CreateWebhook(url=f"http://{host}:{port}/hooks", events=["link.created"])
            made[host] = endpoints.create_endpoint(conn, account_id, body, now=datetime.now(UTC), allow_private=True)[
                "public_id"
            ]

        async def round_for(listen: tuple[str, int]) -> dict[str, str]:
            """One link's event to every endpoint, from a deliverer of a server listening at `listen`."""
            own = OwnServiceResolver(lambda: [], system_resolver, listen=listen)
            deliverer = Deliverer(
                db, webhook_key=KEY, base_for=hosts.base_for_account, policy=address_policy(True), own=own
            )
            await deliverer.start()
            try:
                outbox.create_link(
                    conn,
                    account_id,
                    CreateLink(original_url="https://example.com/"),
                    now=datetime.now(UTC),
                    is_ours=hosts.is_ours,
                    base=SHORT_HOST,
                    daily_limit=100,
                )
                while await deliverer.run_once():
                    pass
            finally:
                await deliverer.stop()
            return {host: endpoints.attempts(conn, account_id, made[host], 1, None)[0].response for host in targets}

        # Listening on every interface, IPv4 or IPv6: each address reaches us, none is sent to.
        for everywhere in ("0.0.0.0", "::"):
            answers = await round_for((everywhere, port))
            for host, answer in answers.items():
                assert answer.startswith("refused: ") and answer.endswith("an address of this service itself"), host
        assert receiver.hosts == []
        # Listening on 127.0.0.1: all of 127.0.0.0/8 and ::1 reach us there (Linux routes the
        # whole block to loopback), the interfaces' addresses do not.
        answers = await round_for(("127.0.0.1", port))
        assert all(answers[host].startswith("refused: ") for host in targets[:4])
        assert all(answers[host] == "thanks" for host in targets[4:])
        # Another port: the same addresses are another service, a real receiver.
        answers = await round_for(("0.0.0.0", port + 1 if port < 65535 else port - 1))
        assert set(answers.values()) == {"thanks"}
        assert len(receiver.hosts) == len(targets[4:]) + len(targets)
    db.close()
    conn.close()
