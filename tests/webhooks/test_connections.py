"""Deliveries over https with a real TLS receiver on 127.0.0.1 (a trustme authority): the
connection goes to the checked address, the certificate is verified for the URL's host name,
and the connection is kept for the next delivery."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl

import trustme

from shortlink.fetcher.ssrf import IPAddress, any_address
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
