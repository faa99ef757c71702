"""Deliveries over https with a real TLS receiver on 127.0.0.1 (a trustme authority): the
connection goes to the checked address, the certificate is verified for the URL's host name,
and the connection is kept for the next delivery."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl

import pytest
import trustme

from shortlink.fetcher.addresses import IPAddress, any_address
from shortlink.webhooks import send
from shortlink.webhooks.connections import Connections, ProtocolError, request_bytes


async def loopback(_host: str, _port: int) -> list[IPAddress]:
    return [ipaddress.ip_address("127.0.0.1")]


async def test_https_deliveries_verify_the_hosts_certificate_and_keep_the_connection():
    authority = trustme.CA()
    hosts_seen: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                fields = dict(line.split(b": ", 1) for line in head[:-4].split(b"\r\n")[1:])
                await reader.readexactly(int(fields[b"Content-Length"]))
                hosts_seen.append(fields[b"Host"])
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nthanks")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            writer.close()

    async def serving(name: str) -> asyncio.Server:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        authority.issue_cert(name).configure_cert(context)
        return await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)

    trusting = ssl.create_default_context()
    authority.configure_trust(trusting)
    headers = {"webhook-id": "evt_1", "webhook-timestamp": "1", "webhook-signature": "v1,x"}
    right, wrong = await serving("hooks.example"), await serving("elsewhere.example")
    async with right, wrong:
        port, wrong_port = right.sockets[0].getsockname()[1], wrong.sockets[0].getsockname()[1]
        connections = Connections(policy=any_address, resolve=loopback, tls=trusting)
        url = f"https://hooks.example:{port}/hooks"
        outcomes = [await send.post(connections, url, headers, b"{}") for _ in range(3)]
        assert [(outcome.ok, outcome.status, outcome.head) for outcome in outcomes] == [(True, 200, "thanks")] * 3
        assert connections.opened == 1 and hosts_seen == [f"hooks.example:{port}".encode()] * 3
        # A certificate for another name, or from an authority the client does not trust: refused.
        mismatch = await send.post(connections, f"https://hooks.example:{wrong_port}/hooks", headers, b"{}")
        untrusted = await send.post(Connections(policy=any_address, resolve=loopback), url, headers, b"{}")
        await connections.aclose()
    assert not mismatch.ok and mismatch.status is None and "CERTIFICATE_VERIFY_FAILED" in mismatch.head
    assert not untrusted.ok and untrusted.status is None and "CERTIFICATE_VERIFY_FAILED" in untrusted.head
    assert len(hosts_seen) == 3


async def test_answers_are_framed_the_head_bounded_and_only_clean_ends_kept():
    """One answer per request, from a raw server: httptools reads them, a head still
    incomplete past 16 KiB is refused, and a connection is kept only after a complete HTTP/1.1
    answer that did not ask to close and sent nothing past its end."""
    script = [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", False),
        (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n", False),
        (b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", True),
        (b"HTTP/1.0 200 OK\r\n\r\nbye", True),  # the body ends when the connection does
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", False),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", True),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlast", False),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Trailer: 1\r\n\r\n", False),
        (b"HTTP/1.1 302 Found\r\nLocation: https://elsewhere.example/\r\nContent-Length: 0\r\n\r\n", False),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n" + b"x" * 200_000, True),  # past the cap
        (b"SSH-2.0-OpenSSH_9.6\r\n", True),
    ]
    answers = iter(script)
    handlers: list[asyncio.Task] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.append(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                fields = dict(line.split(b": ", 1) for line in head[:-4].split(b"\r\n")[1:])
                await reader.readexactly(int(fields[b"Content-Length"]))
                data, close = next(answers)
                writer.write(data)
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    headers = {"webhook-id": "evt_1", "webhook-timestamp": "1", "webhook-signature": "v1,x"}
    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    async with server:
        url = f"http://hooks.example:{server.sockets[0].getsockname()[1]}/hooks"
        connections = Connections(policy=any_address, resolve=loopback)
        outcomes, opened = [], []
        for _ in script:
            outcomes.append(await send.post(connections, url, headers, b"{}"))
            opened.append(connections.opened)
        await connections.aclose()
        await asyncio.wait_for(asyncio.gather(*handlers), 10)  # each saw its connection closed
    assert [(outcome.ok, outcome.status, outcome.head) for outcome in outcomes] == [
        (True, 200, "ok"),
        (False, None, "the answer's head is longer than 16 KiB"),
        (True, 204, ""),
        (True, 200, "bye"),
        (True, 200, "ok"),
        (False, None, "the connection closed before the answer's end (44 bytes read)"),
        (True, 200, "last"),
        (True, 200, "ok"),
        (False, 302, "redirect not followed (Location: https://elsewhere.example/)"),
        (True, 200, "x" * send.HEAD_BYTES),
        (False, None, "not a valid HTTP/1.1 answer: Expected HTTP/, RTSP/ or ICE/"),
    ]
    # Kept after a whole answer that may be kept (the first, the one after a 100, the chunked one,
    # the redirect); closed after a head too long, one asking to close, HTTP/1.0 read until
    # closed, bytes past the answer, one cut short, a body past the cap: the next request opened another.
    assert opened == [1, 1, 2, 3, 4, 5, 6, 6, 6, 6, 7]


def test_a_request_with_a_line_break_or_nul_is_never_written():
    target = send.target_of("http://hooks.example/hooks?a=1")
    assert request_bytes(target, [("webhook-id", "evt_1")], b"{}") == (
        b"POST /hooks?a=1 HTTP/1.1\r\nwebhook-id: evt_1\r\nContent-Length: 2\r\n\r\n{}"
    )
    for headers in (
        [("webhook-id", "evt_1\r\nX-Injected: 1")],
        [("X\nY", "1")],
        [("webhook-id", "a\x00b")],
        [("webhook-id", "évt\u2028")],
    ):
        with pytest.raises(ProtocolError, match="cannot write the request"):
            request_bytes(target, headers, b"{}")
