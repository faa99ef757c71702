"""Keep-alive HTTP/1.1 connections for deliveries: a lean client (h11 over asyncio streams)
rather than httpx's pool, whose bookkeeping cost more than the requests at a thousand small
POSTs a second (docs/benchmarks.md).

Every connection goes to an address checked when it is opened (fetcher.ssrf.checked_address,
the fetcher's rules); it is reused for later deliveries to the same scheme, host and port for at
most MAX_AGE_SECONDS, so a changed DNS answer or rule is applied within that time. Redirects are
never followed (an answer is an answer), and at most `max_answer` bytes of an answer are read:
a connection whose answer was cut is closed, never reused.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from dataclasses import dataclass, field

import certifi
import h11

from shortlink.fetcher.ssrf import AddressPolicy, FetchError, IPAddress, OwnService, Resolver, checked_address

MAX_AGE_SECONDS = 60.0
READ_CHUNK = 65536


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as in the URL (IDNA), without brackets
    port: int
    netloc: str  # the Host header
    path: str  # path and query, at least "/"


@dataclass
class Answer:
    status: int
    location: str | None
    body: bytes  # at most the cap


@dataclass(eq=False)
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    address: IPAddress
    opened: float
    protocol: h11.Connection = field(default_factory=lambda: h11.Connection(h11.CLIENT))
    cut: bool = False  # an answer was not read to its end: never reused

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()

    def fresh(self, now: float) -> bool:
        return now - self.opened < MAX_AGE_SECONDS and not self.reader.at_eof()

    async def exchange(self, target: Target, headers: list[tuple[str, str]], body: bytes, cap: int) -> Answer:
        """One request and its answer; afterwards `reusable()` says whether it may serve another."""
        request = h11.Request(method="POST", target=target.path, headers=[*headers, ("Content-Length", str(len(body)))])
        self.writer.write(self.protocol.send(request) + self.protocol.send(h11.Data(data=body)))
        self.writer.write(self.protocol.send(h11.EndOfMessage()))
        await self.writer.drain()
        status, location, answer = 0, None, bytearray()
        while True:
            event = self.protocol.next_event()
            if event is h11.NEED_DATA:
                self.protocol.receive_data(await self.reader.read(READ_CHUNK))
            elif isinstance(event, h11.Response):
                status = event.status_code
                location = next((v.decode("latin-1") for k, v in event.headers if k == b"location"), None)
            elif isinstance(event, h11.Data):
                answer += event.data
                if len(answer) >= cap:  # the rest is dropped with the connection
                    self.cut = True
                    self.close()
                    break
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                break
            # h11.InformationalResponse (100 Continue and the like): read on
        return Answer(status, location, bytes(answer[:cap]))

    def reusable(self) -> bool:
        if not self.cut and self.protocol.our_state is h11.DONE and self.protocol.their_state is h11.DONE:
            self.protocol.start_next_cycle()
            return True
        return False


class Connections:
    """Idle keep-alive connections by (scheme, host, port), shared by a deliverer's requests."""

    def __init__(self, *, policy: AddressPolicy, resolve: Resolver, max_idle_per_target: int = 32):
        self.policy, self.resolve, self.max_idle = policy, resolve, max_idle_per_target
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._tls: ssl.SSLContext | None = None
        self.opened = 0  # connections opened so far (tests and benchmarks look)

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context(cafile=certifi.where())
        return self._tls

    async def _open(self, target: Target, own: OwnService) -> _Connection:
        address = await checked_address(target.host, target.port, self.policy, own, self.resolve)
        tls = self._tls_context() if target.scheme == "https" else None
        try:
            reader, writer = await asyncio.open_connection(
                str(address), target.port, ssl=tls, server_hostname=target.host if tls else None, limit=READ_CHUNK
            )
        except (OSError, ssl.SSLError) as exc:
            raise FetchError(f"cannot connect to {target.netloc}: {exc}") from None
        self.opened += 1
        return _Connection(reader, writer, address, time.monotonic())

    def _take(self, key: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.fresh(now):
                return connection
            connection.close()
        return None

    async def post(
        self, target: Target, headers: list[tuple[str, str]], body: bytes, *, own: OwnService, max_answer: int
    ) -> Answer:
        """POST over an idle connection to the target, or a new one (checked). An idle connection
        the receiver closed meanwhile gives no answer at all: the request goes once more over a
        new one (at-least-once allows it; the event id lets the receiver drop a copy)."""
        key = (target.scheme, target.host, target.port)
        connection = self._take(key)
        if connection is not None:
            try:
                return await self._use(key, connection, target, headers, body, max_answer)
            except (OSError, h11.ProtocolError, FetchError):
                pass  # a stale keep-alive connection: once more on a new one
        connection = await self._open(target, own)
        try:
            return await self._use(key, connection, target, headers, body, max_answer)
        except (OSError, h11.ProtocolError) as exc:
            raise FetchError(f"{type(exc).__name__}: {exc}".rstrip(": ")) from None

    async def _use(
        self,
        key: tuple[str, str, int],
        connection: _Connection,
        target: Target,
        headers: list[tuple[str, str]],
        body: bytes,
        max_answer: int,
    ) -> Answer:
        try:
            answer = await connection.exchange(target, headers, body, max_answer)
        except BaseException:  # failed, timed out or cancelled mid-exchange: never reused
            connection.close()
            raise
        if answer.status == 0:
            connection.close()
            raise FetchError("the connection closed without an answer")
        idle = self._idle.setdefault(key, [])
        if connection.reusable() and len(idle) < self.max_idle:
            idle.append(connection)
        else:
            connection.close()
        return answer

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()
