"""A real DNS server for tests (dnslib): answers TXT questions from a table the test changes,
on 127.0.0.1 and a free UDP port; every other question gets NXDOMAIN."""

from __future__ import annotations

import threading

from dnslib import QTYPE, RCODE, RR, TXT
from dnslib.server import BaseResolver, DNSLogger, DNSServer


class _Table(BaseResolver):
    def __init__(self) -> None:
        self.records: dict[str, list[str]] = {}
        self.lock = threading.Lock()

    def resolve(self, request, handler):
        reply = request.reply()
        name = str(request.q.qname).rstrip(".").lower()
        with self.lock:
            values = list(self.records.get(name, ()))
        if not values:
            reply.header.rcode = RCODE.NXDOMAIN
        elif request.q.qtype in (QTYPE.TXT, QTYPE.ANY):
            for value in values:
                reply.add_answer(RR(request.q.qname, QTYPE.TXT, rdata=TXT(value), ttl=1))
        return reply


class DnsServer:
    """`with DnsServer() as dns:` then `dns.set_txt(name, value)`; `dns.address` is "127.0.0.1:PORT"."""

    def __init__(self) -> None:
        self._table = _Table()
        # Port 0: the system picks a free one (read back from the bound socket).
        self._server = DNSServer(
            self._table,
            port=0,
            address="127.0.0.1",
            logger=DNSLogger("-request,-reply,-truncated,-error,-recv,-send,-data"),
        )

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self._server.server.server_address[1]}"

    def set_txt(self, name: str, *values: str) -> None:
        with self._table.lock:
            self._table.records[name.rstrip(".").lower()] = list(values)

    def remove(self, name: str) -> None:
        with self._table.lock:
            self._table.records.pop(name.rstrip(".").lower(), None)

    def __enter__(self) -> DnsServer:
        self._server.start_thread()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()
