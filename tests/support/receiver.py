"""A webhook receiver on 127.0.0.1 that checks every request with the `standardwebhooks`
library, as a user's receiver would, and answers as a test tells it to."""

from __future__ import annotations

import hmac
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook, WebhookVerificationError

from tests.support.helpers import serve_in_background

TOLERANCE_SECONDS = 5 * 60  # the library's


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    # Which of the receiver's secrets verified it (each one tried on its own); empty: none did.
    verified_by: list[str]
    # How it was answered (Receiver.mode then): "ok" is a 200.
    mode: str = "ok"

    @property
    def event(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    url: str = ""
    secrets: list[str] = field(default_factory=list)
    # How to answer: "ok", "fail" (500), "redirect" (302), "slow" (sleeps `delay`), "huge"
    # (200 with a body that never ends, trickled), "chunked" (200 in chunks), "garbage" (not HTTP).
    mode: str = "ok"
    delay: float = 0.0
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # The time signatures are checked at: the wall clock unless a test's clock is given.
    clock: Callable[[], float] | None = None
    # Set by running_receiver: stop listening (connections are refused) and listen again.
    down: Callable[[], None] = lambda: None
    up: Callable[[], None] = lambda: None

    def verified_events(self) -> list[dict]:
        with self.lock:
            return [item.event for item in self.received if item.verified_by]

    def types(self) -> list[str]:
        return [event["type"] for event in self.verified_events()]

    def count(self) -> int:
        with self.lock:
            return len(self.received)


@contextmanager
def running_receiver(*, keep_alive: bool = False) -> Iterator[Receiver]:
    """`keep_alive`: answer in HTTP/1.1 and keep each connection open for more requests."""
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

        def log_message(self, *_args) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            headers = {name.lower(): value for name, value in self.headers.items()}
            verified = [secret for secret in list(receiver.secrets) if verifies(secret, body, headers, receiver.clock)]
            with receiver.lock:
                receiver.received.append(Received(headers, body, verified, receiver.mode))
            try:
                self._answer()
            except OSError:  # the deliverer gave up waiting and closed the connection
                pass

        def _answer(self) -> None:
            if receiver.mode == "fail":
                self._send(500, b"receiver broke")
            elif receiver.mode == "redirect":
                self.send_response(302)
                self.send_header("Location", "http://127.0.0.1:9/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif receiver.mode == "chunked":  # the same 200 "thanks", in two chunks and a trailer
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b"3;ext=1\r\ntha\r\n3\r\nnks\r\n0\r\nX-Trailer: yes\r\n\r\n")
            elif receiver.mode == "garbage":  # not HTTP at all
                self.wfile.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
                self.close_connection = True
            elif receiver.mode == "slow":
                time.sleep(receiver.delay)  # a pause, not a wait: a receiver slow to answer
                self._send(200, b"late")
            elif receiver.mode == "huge":
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                try:
                    for _ in range(100_000):  # 6.4 GB if nobody stopped reading
                        self.wfile.write(b"x" * 65536)
                        time.sleep(0.001)  # a pause, not a wait: a body that drips
                except OSError:
                    pass
            else:
                self._send(200, b"thanks")

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class Server(ThreadingHTTPServer):
        request_queue_size = 128  # deliverers open up to 32 connections each at once

    def listen(port: int) -> Server:
        server = Server(("127.0.0.1", port), Handler)
        server.daemon_threads = True
        serve_in_background(server)
        return server

    servers = [listen(0)]
    port = servers[0].server_address[1]
    receiver.url = f"http://127.0.0.1:{port}/hooks"

    def down() -> None:
        servers[-1].shutdown()
        servers[-1].server_close()

    receiver.down = down
    receiver.up = lambda: servers.append(listen(port))  # the same port (SO_REUSEADDR)
    try:
        yield receiver
    finally:
        down()


def verifies(secret: str, body: bytes, headers: dict[str, str], clock: Callable[[], float] | None) -> bool:
    """`Webhook(secret).verify` as a receiver runs it; at a test's clock, when one is given, the
    same check made with the library's own `sign` (its `verify` reads the wall clock): the
    timestamp within its 5 minutes of tolerance and one `v1,` signature equal to the expected."""
    if clock is None:
        try:
            Webhook(secret).verify(body, headers)
        except WebhookVerificationError:
            return False
        return True
    try:
        timestamp = int(headers["webhook-timestamp"])
        moment = datetime.fromtimestamp(timestamp, UTC)
        expected = Webhook(secret).sign(headers["webhook-id"], moment, body.decode())
    except (KeyError, ValueError):
        return False
    if abs(clock() - timestamp) > TOLERANCE_SECONDS:
        return False
    return any(hmac.compare_digest(expected, given) for given in headers.get("webhook-signature", "").split(" "))
