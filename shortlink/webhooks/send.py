"""One delivery over HTTP, under the title fetcher's address rules (fetcher.ssrf): the host is
resolved and every address checked at connection time, the connection goes to the checked
address, redirects are never followed, the answer is read up to a cap and the whole exchange
is bounded in time."""

from __future__ import annotations

import asyncio
import time

import httpx
import msgspec

from shortlink.controls import terminal_safe
from shortlink.fetcher.ssrf import AddressPolicy, FetchError, OwnService, Resolver, checked_address, system_resolver

TIMEOUT_SECONDS = 10.0
# Read of the answer at most; the log keeps its first HEAD_BYTES.
MAX_ANSWER_BYTES = 64 * 1024
HEAD_BYTES = 512
NO_OWN_SERVICE = OwnService()
USER_AGENT = "shortlink-webhooks/1 (+https://www.standardwebhooks.com/)"


class Outcome(msgspec.Struct, frozen=True):
    ok: bool
    status: int | None
    latency_ms: int
    head: str  # the answer's first bytes, or what went wrong


async def post(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    body: bytes,
    *,
    policy: AddressPolicy,
    own: OwnService = NO_OWN_SERVICE,
    resolve: Resolver = system_resolver,
    timeout: float = TIMEOUT_SECONDS,
) -> Outcome:
    """POST `body`; a 2xx answer within `timeout` is a success, anything else a failure. The
    client must not follow redirects or use proxies (follow_redirects=False, trust_env=False)."""
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        async with asyncio.timeout(timeout):
            status, head = await _exchange(client, url, headers, body, policy, own, resolve)
    except TimeoutError:
        return Outcome(False, None, elapsed(), f"no answer within {timeout:g} s")
    except FetchError as exc:
        return Outcome(False, None, elapsed(), str(exc))
    ok = 200 <= status < 300
    if 300 <= status < 400:
        head = f"redirect not followed ({head})"[:HEAD_BYTES]
    return Outcome(ok, status, elapsed(), head)


async def _exchange(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    body: bytes,
    policy: AddressPolicy,
    own: OwnService,
    resolve: Resolver,
) -> tuple[int, str]:
    try:
        target = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise FetchError(f"invalid URL: {exc}") from None
    if target.scheme not in ("http", "https") or not target.host:
        raise FetchError("not an http(s) URL")
    host = target.raw_host.decode("ascii")
    port = target.port or (443 if target.scheme == "https" else 80)
    if own.has_host(host, port):
        raise FetchError(f"refused: {host} is this service itself")
    address = await checked_address(host, port, policy, own, resolve)
    pinned = httpx.URL(scheme=target.scheme, host=str(address), port=target.port, raw_path=target.raw_path or b"/")
    request = client.build_request(
        "POST",
        pinned,
        content=body,
        headers={
            **headers,
            "Host": target.netloc.decode("ascii"),
            "User-Agent": USER_AGENT,
            "Content-Type": "application/json",
        },
        extensions={"sni_hostname": host} if target.scheme == "https" else {},
    )
    try:
        response = await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        raise FetchError(f"{type(exc).__name__}: {exc}".rstrip(": ")) from None
    try:
        answer = bytearray()
        try:
            async for chunk in response.aiter_raw():
                answer += chunk
                if len(answer) >= MAX_ANSWER_BYTES:
                    break  # the rest is dropped with the connection
        except httpx.HTTPError:
            pass  # the status is what counts; a broken body is kept as far as it came
        location = response.headers.get("location")
        head = f"Location: {location}" if location and 300 <= response.status_code < 400 else ""
        text = head or answer[:HEAD_BYTES].decode("utf-8", "replace")
        return response.status_code, terminal_safe(text)
    finally:
        await response.aclose()
