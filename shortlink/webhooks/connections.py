"""Keep-alive HTTP/1.1 connections for deliveries: a lean client over asyncio streams rather
than httpx's pool, whose bookkeeping cost more than the requests at a thousand small POSTs a
second, or h11, whose validation cost more than a third of a delivery's CPU
(docs/benchmarks.md).

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
from dataclasses import dataclass

import certifi

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


class ProtocolError(Exception):
    """An answer that is not HTTP/1.x as we read it."""


class NoAnswer(ProtocolError):
    """The connection closed before any byte of an answer (a kept connection the receiver
    closed meanwhile, typically)."""


# Answers without a body (RFC 9110 §6.4.1).
NO_BODY = frozenset({204, 304})
MAX_HEAD_BYTES = 16 * 1024
MAX_CHUNK_LINE = 1024


def _breaks(text: str) -> bool:
    return "\r" in text or "\n" in text or "\0" in text


@dataclass(eq=False)
class _Connection:
    """One HTTP/1.1 connection, written and read by hand: our requests are always the same
    shape (a POST with a known length, headers we made), and of the answer only the status,
    a redirect's Location and the first bytes matter. Every read is bounded (the head, each
    chunk line, the body up to the cap); anything unexpected closes the connection."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    address: IPAddress
    opened: float
    reusable: bool = False  # after an answer read to its end, with the connection kept open

    def close(self) -> None:
        self.reusable = False
        with contextlib.suppress(Exception):
            self.writer.close()

    def fresh(self, now: float) -> bool:
        return now - self.opened < MAX_AGE_SECONDS and not self.reader.at_eof()

    async def exchange(self, target: Target, headers: list[tuple[str, str]], body: bytes, cap: int) -> Answer:
        self.reusable = False
        if any(_breaks(text) for pair in headers for text in pair) or _breaks(target.path):
            raise ProtocolError("a line break in a header")  # never: our own values, checked anyway
        lines = [f"POST {target.path} HTTP/1.1", *(f"{name}: {value}" for name, value in headers)]
        head = "\r\n".join([*lines, f"Content-Length: {len(body)}", "", ""])
        self.writer.write(head.encode("latin-1") + body)
        await self.writer.drain()
        while True:
            version, status, fields = await self._head()
            if not 100 <= status < 200:
                break
            if status == 101:
                raise ProtocolError("101 Switching Protocols")
            # 1xx (100 Continue, 103 Early Hints): the final answer follows.
        answer, complete = await self._body(status, fields, cap)
        keep = version == b"HTTP/1.1" and "close" not in fields.get("connection", "").lower()
        self.reusable = complete and keep
        if not self.reusable:
            self.close()
        return Answer(status, fields.get("location"), answer)

    async def _head(self) -> tuple[bytes, int, dict[str, str]]:
        try:
            data = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                raise NoAnswer("the connection closed without an answer") from None
            raise ProtocolError("a cut answer") from None
        except asyncio.LimitOverrunError:
            raise ProtocolError("an answer's head over 64 KiB") from None
        if len(data) > MAX_HEAD_BYTES:
            raise ProtocolError("an answer's head over 16 KiB")
        status_line, *header_lines = data[:-4].split(b"\r\n")
        version, _, rest = status_line.partition(b" ")
        code = rest[:3]
        if version not in (b"HTTP/1.1", b"HTTP/1.0") or len(code) != 3 or not code.isdigit():
            raise ProtocolError(f"not an HTTP/1.x answer: {status_line[:40]!r}")
        fields: dict[str, str] = {}
        for line in header_lines:
            name, colon, value = line.partition(b":")
            if not colon or not name or name != name.strip():
                raise ProtocolError("a malformed header line")
            key, text = name.decode("latin-1").lower(), value.strip().decode("latin-1")
            if key in fields and key == "content-length" and fields[key] != text:
                raise ProtocolError("two different Content-Lengths")
            fields[key] = f"{fields[key]}, {text}" if key in fields and key != "content-length" else text
        return version, int(code), fields

    async def _body(self, status: int, fields: dict[str, str], cap: int) -> tuple[bytes, bool]:
        """Up to `cap` bytes of the body, and whether it was read to its end (the connection
        then at the next answer's start)."""
        if status in NO_BODY:
            return b"", True
        if "transfer-encoding" in fields:
            if fields["transfer-encoding"].lower().replace(" ", "") != "chunked":
                return await self._until_closed(cap), False
            return await self._chunked(cap)
        if "content-length" in fields:
            length = fields["content-length"]
            if not length.isdigit():
                raise ProtocolError("an invalid Content-Length")
            wanted = int(length)
            data = await self.reader.readexactly(min(wanted, cap))
            return data, wanted <= cap
        return await self._until_closed(cap), False

    async def _chunked(self, cap: int) -> tuple[bytes, bool]:
        answer = bytearray()
        while True:
            line = await self._line()
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ProtocolError("an invalid chunk size") from None
            if size < 0:
                raise ProtocolError("an invalid chunk size")
            if size == 0:
                while await self._line():  # trailers, up to the empty line
                    pass
                return bytes(answer), True
            if len(answer) + size > cap:
                answer += await self.reader.readexactly(cap - len(answer))
                return bytes(answer), False
            answer += await self.reader.readexactly(size)
            if await self._line():
                raise ProtocolError("a chunk longer than its size")

    async def _line(self) -> bytes:
        try:
            line = await self.reader.readuntil(b"\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            raise ProtocolError("a cut or overlong chunk line") from None
        if len(line) > MAX_CHUNK_LINE:
            raise ProtocolError("an overlong chunk line")
        return line[:-2]

    async def _until_closed(self, cap: int) -> bytes:
        answer = bytearray()
        while len(answer) < cap:
            chunk = await self.reader.read(min(READ_CHUNK, cap - len(answer)))
            if not chunk:
                break
            answer += chunk
        return bytes(answer)


def _failure(exc: BaseException) -> FetchError:
    if isinstance(exc, ProtocolError):
        return FetchError(str(exc))
    if isinstance(exc, asyncio.IncompleteReadError):
        return FetchError("the answer was cut short")
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
        """`tls`: the context of https connections (certificates verified against certifi's
        authorities unless given)."""
        self.policy, self.resolve, self.max_idle = policy, resolve, max_idle_per_target
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._tls = tls
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
            except (OSError, NoAnswer):
                pass  # a stale keep-alive connection: once more on a new one
            except (ProtocolError, asyncio.IncompleteReadError) as exc:
                raise _failure(exc) from None
        connection = await self._open(target, own)
        try:
            return await self._use(key, connection, target, headers, body, max_answer)
        except (OSError, ProtocolError, asyncio.IncompleteReadError) as exc:
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
