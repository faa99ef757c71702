"""Deliveries over https with a real TLS receiver on 127.0.0.1 (a trustme authority): the
connection goes to the checked address, the certificate is verified for the URL's host name,
and the connection is kept for the next delivery."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl

import trustme

from shortlink.fetcher.addresses import IPAddress, any_address
from shortlink.webhooks import send
from shortlink.webhooks.connections import Connections


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


async def test_h11_frames_answers_bounds_the_head_and_decides_what_is_kept():
    """One answer per request, from a raw server: h11 reads them, refuses a head still
    incomplete past 16 KiB,
    and a connection is kept only after a complete HTTP/1.1 answer that did not ask to close
    and sent nothing past its end."""
    script = [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", False),
        (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n", False),
        (b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", True),
        (b"HTTP/1.0 200 OK\r\n\r\nbye", True),  # the body ends when the connection does
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", False),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", True),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlast", False),
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
    cut = "peer closed connection without sending complete message body (received 5 bytes, expected 10)"
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
        (False, None, "not a valid HTTP/1.1 answer: Receive buffer too long"),
        (True, 204, ""),
        (True, 200, "bye"),
        (True, 200, "ok"),
        (False, None, f"not a valid HTTP/1.1 answer: {cut}"),
        (True, 200, "last"),
    ]
    # Kept after the first answer only; each later one was closed (a head too long, asked to
    # close, HTTP/1.0, bytes past the answer, cut short), so the next request opened another.
    assert opened == [1, 1, 2, 3, 4, 5, 6]
