"""Keep-alive HTTP/1.1 connections for deliveries: a lean client (h11 over asyncio streams)
rather than httpx's pool, whose bookkeeping cost more than the requests at a thousand small
POSTs a second (docs/benchmarks.md). h11 frames every byte: the request, the answer's head,
its body (by length, chunks or until closed) and whether the connection may be kept.

Every connection goes to an address checked when it is opened (fetcher.addresses.checked_address,
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

import h11

from shortlink.fetcher.addresses import AddressPolicy, FetchError, IPAddress, OwnService, Resolver, checked_address
from shortlink.fetcher.ssrf import tls_context

MAX_AGE_SECONDS = 60.0
READ_CHUNK = 65536
MAX_MESSAGE = 200  # of a failure's text in the log


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


class ProtocolError(Exception):
    """An answer we cannot use beyond what h11 refuses (h11.RemoteProtocolError): none at all,
    or an event a POST's answer never has."""


class NoAnswer(ProtocolError):
    """The connection closed before any byte of an answer (a kept connection the receiver
    closed meanwhile, typically)."""


# h11's max_incomplete_event_size: an answer's head (or chunk line, or trailers) still
# incomplete with more than this buffered is refused. h11 checks after each read, so what it
# holds stays under this plus one READ_CHUNK.
MAX_HEAD_BYTES = 16 * 1024


def _client() -> h11.Connection:
    return h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)


@dataclass(eq=False)
class _Connection:
    """One HTTP/1.1 connection, framed by h11. Every read is bounded (h11's incomplete event
    size, the body up to the cap); anything unexpected closes the connection."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    address: IPAddress
    opened: float
    protocol: h11.Connection = field(default_factory=_client)
    reusable: bool = False  # after an answer read to its end, with the connection kept open

    def close(self) -> None:
        self.reusable = False
        with contextlib.suppress(Exception):
            self.writer.close()

    def fresh(self, now: float) -> bool:
        return now - self.opened < MAX_AGE_SECONDS and not self.reader.at_eof()

    async def exchange(self, target: Target, headers: list[tuple[str, str]], body: bytes, cap: int) -> Answer:
        self.reusable = False
        protocol = self.protocol
        request = h11.Request(method="POST", target=target.path, headers=[*headers, ("Content-Length", str(len(body)))])
        self.writer.write(
            protocol.send(request) + protocol.send(h11.Data(data=body)) + protocol.send(h11.EndOfMessage())
        )
        await self.writer.drain()
        status, location, answer, received = 0, None, bytearray(), False
        while True:
            event = protocol.next_event()
            if event is h11.NEED_DATA:
                data = await self.reader.read(READ_CHUNK)
                if not data and not received:
                    raise NoAnswer("the connection closed without an answer")
                received = True
                protocol.receive_data(data)  # b"": the receiver closed; h11 says what that means
            elif isinstance(event, h11.Response):
                status = event.status_code
                location = next((v.decode("latin-1") for k, v in event.headers if k == b"location"), None)
            elif isinstance(event, h11.Data):
                answer += event.data
                if len(answer) > cap:  # the rest is dropped with the connection
                    self.close()
                    return Answer(status, location, bytes(answer[:cap]))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif not isinstance(event, h11.InformationalResponse):  # 1xx: the final answer follows
                raise ProtocolError(f"unexpected {type(event).__name__} in an answer")
        # Kept only if h11 says both sides may go on (HTTP/1.1, no "Connection: close") and the
        # receiver sent nothing past its answer.
        if protocol.our_state is h11.DONE and protocol.their_state is h11.DONE:
            protocol.start_next_cycle()
            self.reusable = not protocol.trailing_data[0]
        if not self.reusable:
            self.close()
        return Answer(status, location, bytes(answer))


def _failure(exc: BaseException) -> FetchError:
    if isinstance(exc, ProtocolError):
        return FetchError(str(exc))
    if isinstance(exc, h11.RemoteProtocolError):
        return FetchError(f"not a valid HTTP/1.1 answer: {exc}"[:MAX_MESSAGE])
    if isinstance(exc, h11.LocalProtocolError):  # never: our own values, checked by h11 anyway
        return FetchError(f"cannot write the request: {exc}"[:MAX_MESSAGE])
    return FetchError(f"{type(exc).__name__}: {exc}".rstrip(": "))


class Connections:
    """Idle keep-alive connections by (scheme, host, port), shared by a deliverer's requests."""

    def __init__(
        self,
        *,
        policy: AddressPolicy,
        resolve: Resolver,
        max_idle_per_target: int = 32,
        tls: ssl.SSLContext | None = None,
    ):
        """`tls`: the context of https connections (the process's verifying one unless given)."""
        self.policy, self.resolve, self.max_idle = policy, resolve, max_idle_per_target
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._tls = tls
        self.opened = 0  # connections opened so far (tests and benchmarks look)

    def _tls_context(self) -> ssl.SSLContext:
        return self._tls if self._tls is not None else tls_context()

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
            except (OSError, NoAnswer):
                pass  # a stale keep-alive connection: once more on a new one
            except (ProtocolError, h11.ProtocolError) as exc:
                raise _failure(exc) from None
        connection = await self._open(target, own)
        try:
            return await self._use(key, connection, target, headers, body, max_answer)
        except (OSError, ProtocolError, h11.ProtocolError) as exc:
            raise _failure(exc) from None

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
        idle = self._idle.setdefault(key, [])
        if connection.reusable and len(idle) < self.max_idle:
            idle.append(connection)
        else:
            connection.close()
        return answer

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()
