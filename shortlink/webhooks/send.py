"""One delivery over HTTP, under the title fetcher's address rules (fetcher.ssrf): the host is
resolved and every address checked when a connection is opened (webhooks.connections), the
connection goes to the checked address, redirects are never followed, the answer is read up to
a cap and the whole exchange is bounded in time."""

from __future__ import annotations

import asyncio
import functools
import time

import httpx
import msgspec

from shortlink.controls import terminal_safe
from shortlink.fetcher.addresses import NO_OWN_SERVICE, FetchError, OwnService
from shortlink.webhooks.connections import Connections, Target

TIMEOUT_SECONDS = 10.0
# Read of the answer at most; the log keeps its first HEAD_BYTES.
MAX_ANSWER_BYTES = 64 * 1024
HEAD_BYTES = 512
USER_AGENT = "shortlink-webhooks/1 (+https://www.standardwebhooks.com/)"


class DeliveryResult(msgspec.Struct, frozen=True):
    ok: bool
    status: int | None
    latency_ms: int
    head: str  # the answer's first bytes, or what went wrong


async def post(
    connections: Connections,
    url: str,
    headers: dict[str, str],
    body: bytes,
    *,
    own: OwnService = NO_OWN_SERVICE,
    timeout: float = TIMEOUT_SECONDS,
) -> DeliveryResult:
    """POST `body` over one of `connections` (which apply the address rules when they open one);
    a 2xx answer within `timeout` is a success, anything else a failure."""
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        async with asyncio.timeout(timeout):
            status, head = await _exchange(connections, url, headers, body, own)
    except TimeoutError:
        return DeliveryResult(False, None, elapsed(), f"no answer within {timeout:g} s")
    except FetchError as exc:
        return DeliveryResult(False, None, elapsed(), str(exc))
    ok = 200 <= status < 300
    if 300 <= status < 400:
        head = f"redirect not followed ({head})"[:HEAD_BYTES]
    return DeliveryResult(ok, status, elapsed(), head)


@functools.lru_cache(maxsize=1024)  # an endpoint's URL is parsed once, not once per delivery
def target_of(url: str) -> Target:
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise FetchError(f"invalid URL: {exc}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise FetchError("not an http(s) URL")
    return Target(
        scheme=parsed.scheme,
        host=parsed.raw_host.decode("ascii"),
        port=parsed.port or (443 if parsed.scheme == "https" else 80),
        netloc=parsed.netloc.decode("ascii"),
        path=(parsed.raw_path or b"/").decode("ascii"),
    )


async def _exchange(
    connections: Connections, url: str, headers: dict[str, str], body: bytes, own: OwnService
) -> tuple[int, str]:
    target = target_of(url)
    if own.has_host(target.host, target.port):
        raise FetchError(f"refused: {target.host} is this service itself")
    request_headers = [
        ("Host", target.netloc),
        ("User-Agent", USER_AGENT),
        ("Content-Type", "application/json"),
        *headers.items(),
    ]
    answer = await connections.post(target, request_headers, body, own=own, max_answer=MAX_ANSWER_BYTES)
    if answer.location and 300 <= answer.status < 400:
        text = f"Location: {answer.location}"
    else:
        text = answer.body[:HEAD_BYTES].decode("utf-8", "replace")
    return answer.status, terminal_safe(text)
