"""Real Caddy (Debian's) with on-demand TLS in front of a real server: a domain an account
connected gets a certificate once its TXT record, served by a real DNS server on 127.0.0.1, is
verified; a name that is not verified gets none. Caddy runs docs/deploy/Caddyfile.on-demand with
its internal CA instead of Let's Encrypt."""

from __future__ import annotations

import http.client
import json
import os
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import paths
from tests.support.helpers import wait_for
from tests.system.test_deploy import stop, substituted, wait_for_port
from throwaway.debian import find_or_install
from throwaway.dns_server import DnsServer
from throwaway.live_server import LiveServer, free_port

NAME = "go.brand.example"
OTHER = "not-verified.example"


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    with DnsServer() as server:
        yield server


@pytest.fixture
def server(tmp_path: Path, dns: DnsServer) -> Iterator[LiveServer]:
    live = LiveServer(tmp_path, domains_nameservers=dns.address).start()
    yield live
    live.stop()


@pytest.fixture
def caddy(tmp_path_factory, server: LiveServer) -> Iterator[tuple[int, Path]]:
    binary = find_or_install("caddy", "caddy", "the on-demand TLS test")
    directory = tmp_path_factory.mktemp("caddy")
    port = free_port()
    # A test's global options: no admin endpoint, no port-80 listener, the internal CA kept in
    # this directory and never installed in the system's trust store.
    options = "\tadmin off\n\tauto_https disable_redirects\n\tskip_install_trust\n\ton_demand_tls {"
    site = substituted(
        (paths.REPO / "docs" / "deploy" / "Caddyfile.on-demand").read_text(),
        {
            "\ton_demand_tls {": options,
            "127.0.0.1:8000": f"127.0.0.1:{server.port}",
            "https:// {": f"https://:{port} {{",
            "\t\ton_demand\n": "\t\ton_demand\n\t\tissuer internal\n",
        },
    )
    (directory / "Caddyfile").write_text(site)
    log = directory / "caddy.log"
    environment = {
        **os.environ,
        "HOME": str(directory),
        "XDG_DATA_HOME": str(directory),
        "XDG_CONFIG_HOME": str(directory),
    }
    with log.open("wb") as output:
        process = subprocess.Popen(
            [binary, "run", "--adapter", "caddyfile", "--config", str(directory / "Caddyfile")],
            stdout=output,
            stderr=output,
            env=environment,
        )
    wait_for_port(port, process, log)
    yield port, directory
    stop(process)


def api(server: LiveServer, key: str, method: str, path: str, body: dict | None = None) -> dict:
    status, answer = server.request(
        method,
        f"/api/v1{path}",
        body=None if body is None else json.dumps(body),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    assert status in (200, 201), answer
    return json.loads(answer)["data"]


class _Named(http.client.HTTPSConnection):
    """An https connection to 127.0.0.1 that names `name` in its SNI, as a browser would."""

    def __init__(self, port: int, name: str, context: ssl.SSLContext):
        super().__init__("127.0.0.1", port, context=context, timeout=15)
        self.name = name

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self.name)  # type: ignore[attr-defined]


def handshake(port: int, name: str, context: ssl.SSLContext, path: str) -> http.client.HTTPResponse:
    connection = _Named(port, name, context)
    connection.request("GET", path, headers={"Host": name, "User-Agent": "curl/8"})
    return connection.getresponse()


def test_only_a_verified_domain_gets_a_certificate_and_its_links(server, caddy, dns):
    port, directory = caddy
    key = server.create_key("owner@example.com")
    link = api(server, key, "POST", "/links", {"originalUrl": "https://example.com/landing"})
    domain = api(server, key, "POST", "/domains", {"name": NAME})
    path = f"/l/{link['shortCode']}"
    untrusted = ssl.create_default_context()
    untrusted.check_hostname, untrusted.verify_mode = False, ssl.CERT_NONE

    # Not verified yet: Caddy's ask is refused, so the handshake fails.
    with pytest.raises(ssl.SSLError):
        handshake(port, NAME, untrusted, path)
    dns.set_txt(domain["verification"]["name"], domain["verification"]["value"])
    assert api(server, key, "POST", f"/domains/{domain['id']}/verify")["verified"] is True

    wait_for(lambda: _answers(port, NAME, untrusted, path), 30, "Caddy to issue the certificate")
    root = wait_for(lambda: _root(directory), 30, "Caddy's internal root certificate")
    trusted = ssl.create_default_context(cafile=str(root))
    response = handshake(port, NAME, trusted, path)  # the certificate is valid for the name
    assert response.status == 302 and response.getheader("Location") == "https://example.com/landing"
    with pytest.raises(ssl.SSLError):
        handshake(port, OTHER, untrusted, path)


def _answers(port: int, name: str, context: ssl.SSLContext, path: str) -> bool:
    try:
        return handshake(port, name, context, path).status == 302
    except ssl.SSLError:
        return False


def _root(directory: Path) -> Path | None:
    found = list(directory.rglob("pki/authorities/local/root.crt"))
    return found[0] if found else None
