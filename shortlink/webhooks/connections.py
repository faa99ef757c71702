"""Keep-alive HTTP/1.1 connections for deliveries: a lean client over asyncio streams rather than
httpx's pool, whose bookkeeping cost more than the requests themselves at the rates clicks
bring (docs/benchmarks.md). Answers are read by httptools (llhttp, Node's C parser, which uvicorn
reads requests with): the head, the body by length, chunks or until closed, and whether the
connection may be kept. The request is our own values on one line each, refused if any holds a
line break or NUL.

Every connection goes to an address checked when it is opened (fetcher.addresses.checked_address,
the fetcher's rules); it is reused for later deliveries to the same scheme, host and port for at
most MAX_AGE_SECONDS, so a changed DNS answer or rule is applied within that time. Redirects are
never followed (an answer is an answer), and at most `max_answer` bytes of an answer's body are
read: a connection whose answer was cut is closed, never reused.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
import time
from dataclasses import dataclass

import httptools

from shortlink.fetcher.addresses import AddressPolicy, FetchError, IPAddress, OwnService, Resolver, checked_address
from shortlink.fetcher.ssrf import tls_context

MAX_AGE_SECONDS = 60.0
READ_CHUNK = 65536
MAX_MESSAGE = 200  # of a failure's text in the log
# What an answer may hold besides its body (the head, chunk lines, trailers): more is refused.
# Checked after each read, so what is held stays under this plus one READ_CHUNK.
MAX_HEAD_BYTES = 16 * 1024
# Never in a request's line or headers: each would end or split one.
_UNWRITABLE = re.compile(r"[\x00\r\n]")


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
    """An answer we cannot use: not HTTP/1.1 as llhttp reads it, cut short, or too long a head."""


class NoAnswer(ProtocolError):
    """The connection closed before any byte of an answer (a kept connection the receiver
    closed meanwhile, typically)."""


def request_bytes(target: Target, headers: list[tuple[str, str]], body: bytes) -> bytes:
    lines = [f"POST {target.path} HTTP/1.1", *(f"{name}: {value}" for name, value in headers)]
    if " " in target.path or any(_UNWRITABLE.search(line) for line in lines):
        raise ProtocolError("cannot write the request: a line break, NUL or space where none may be")
    lines.append(f"Content-Length: {len(body)}\r\n\r\n")
    try:
        return "\r\n".join(lines).encode("latin-1") + body
    except UnicodeEncodeError:
        raise ProtocolError("cannot write the request: a character HTTP/1.1 cannot carry") from None


class _Reading:
    """httptools' callbacks for the answer to one request."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.status, self.body = 0, bytearray()
        self.location: str | None = None
        self.head_read = self.complete = self.keep = self.past_end = False
        self.until_close = True  # no Content-Length, no chunked: the body ends with the connection

    def on_message_begin(self) -> None:
        if self.complete:  # bytes past the answer: the connection is not kept
            self.past_end = True

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.complete:
            return
        name = name.lower()
        if name == b"location":
            self.location = value.decode("latin-1")
        elif name == b"content-length":
            self.until_close = False
        elif name == b"transfer-encoding":
            self.until_close = value.rsplit(b",", 1)[-1].strip().lower() != b"chunked"

    def on_headers_complete(self) -> None:
        self.head_read = True

    def on_body(self, data: bytes) -> None:
        if not self.complete:
            self.body += data

    def on_message_complete(self) -> None:
        if self.complete:
            return
        status = self.parser.get_status_code()
        if status < 200:  # 1xx: the final answer follows
            self.location, self.head_read, self.until_close = None, False, True
            return
        self.status, self.complete, self.keep = status, True, self.parser.should_keep_alive()


@dataclass(eq=False)
class _Connection:
    """One HTTP/1.1 connection. Every read is bounded (the head, the body up to the cap);
    anything unexpected closes the connection."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    address: IPAddress
    opened: float
    reusable: bool = False  # after an answer read to its end, with the connection kept open

    def close(self) -> None:
        self.reusable = False
        with contextlib.suppress(Exception):
            self.writer.close()

    def fresh(self, now_mono: float) -> bool:
        return now_mono - self.opened < MAX_AGE_SECONDS and not self.reader.at_eof()

    async def exchange(self, target: Target, headers: list[tuple[str, str]], body: bytes, cap: int) -> Answer:
        self.reusable = False
        self.writer.write(request_bytes(target, headers, body))
        await self.writer.drain()
        reading, received = _Reading(), 0
        while not reading.complete:
            data = await self.reader.read(READ_CHUNK)
            if not data:
                if not received:
                    raise NoAnswer("the connection closed without an answer")
                if not (reading.head_read and reading.until_close):
                    raise ProtocolError(f"the connection closed before the answer's end ({received} bytes read)")
                self.close()
                return Answer(reading.parser.get_status_code(), reading.location, bytes(reading.body))
            received += len(data)
            try:
                reading.parser.feed_data(data)
            except (httptools.HttpParserError, httptools.HttpParserUpgrade) as exc:
                if not reading.complete:
                    raise ProtocolError(f"not a valid HTTP/1.1 answer: {exc}") from None
                reading.past_end = True  # the answer was whole; what followed it was not one
            if len(reading.body) > cap:  # the rest is dropped with the connection
                self.close()
                return Answer(reading.parser.get_status_code(), reading.location, bytes(reading.body[:cap]))
            if not reading.complete and received - len(reading.body) > MAX_HEAD_BYTES:
                raise ProtocolError(f"the answer's head is longer than {MAX_HEAD_BYTES // 1024} KiB")
        # Kept only if the answer allows it (HTTP/1.1 or keep-alive, no "Connection: close") and
        # the receiver sent nothing past its end.
        self.reusable = reading.keep and not reading.past_end
        if not self.reusable:
            self.close()
        return Answer(reading.status, reading.location, bytes(reading.body))


def _failure(exc: BaseException) -> FetchError:
    if isinstance(exc, ProtocolError):
        return FetchError(str(exc)[:MAX_MESSAGE])
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
        now_mono = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.fresh(now_mono):
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
            except ProtocolError as exc:
                raise _failure(exc) from None
        connection = await self._open(target, own)
        try:
            return await self._use(key, connection, target, headers, body, max_answer)
        except (OSError, ProtocolError) as exc:
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
