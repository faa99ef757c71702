"""The deploy recipes in docs/deploy/, run for real: systemd-analyze on the units, and the real
nginx and Caddy from Debian's packages in front of a real server, each with the committed
snippet (only ports, upstream and certificate paths substituted).

Through the proxy the server must see each visitor's own address (not the proxy's, and not
one a client forged in X-Forwarded-For) and the public https host. Observed the way a
visitor would: per-visitor password-attempt buckets (5 wrong passwords a minute each, by
default), and the short URL the in-app page's "Open in browser" escape is built from.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
import trustme

from tests.support import paths
from tests.support.helpers import wait_for
from tests.support.visitors import INSTAGRAM_IOS, IPHONE
from throwaway.debian import find_or_install
from throwaway.live_server import LiveServer, free_port

# Every test here starts server processes: seconds each.
pytestmark = [pytest.mark.system, pytest.mark.slow]

DEPLOY = paths.REPO / "docs" / "deploy"
UNITS = ("shortlink.service", "shortlink-backup.service", "shortlink-backup.timer")
INSTALLED_SHORTLINK = "/opt/shortlink/.venv/bin/shortlink"
PUBLIC_HOST = "sho.rt"


def substituted(text: str, replacements: dict[str, str]) -> str:
    """`text` with each replacement made; each must be there, so recipe and test never drift apart."""
    for old, new in replacements.items():
        assert old in text, f"the recipe no longer contains {old!r}"
        text = text.replace(old, new)
    return text


def test_systemd_units_pass_systemd_analyze_verify(tmp_path):
    analyze = find_or_install("systemd-analyze", "systemd", "the systemd unit check")
    # verify insists that ExecStart's program exists. The units name where the README
    # installs shortlink (/opt/shortlink); the copies checked here name this checkout's.
    here = str(Path(sys.executable).parent / "shortlink")
    for name in UNITS:
        text = (DEPLOY / name).read_text()
        (tmp_path / name).write_text(text.replace(INSTALLED_SHORTLINK, here))
    service = (DEPLOY / "shortlink.service").read_text()
    for setting in ("Restart=on-failure", "User=shortlink", "StateDirectory=shortlink", "WorkingDirectory="):
        assert setting in service
    result = subprocess.run(
        [analyze, "verify", *(str(tmp_path / name) for name in UNITS)], capture_output=True, text=True, timeout=120
    )
    # verify exits 0 even when it ignores a line it cannot parse: silence is the pass.
    assert result.returncode == 0 and result.stdout + result.stderr == "", result.stdout + result.stderr
    broken = tmp_path / "broken.service"
    broken.write_text(service.replace("Restart=on-failure", "Restart=sometimes").replace(INSTALLED_SHORTLINK, here))
    complaint = subprocess.run([analyze, "verify", str(broken)], capture_output=True, text=True, timeout=120)
    assert "restart specifier" in complaint.stdout + complaint.stderr  # the check is not blind


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A certificate for the public host (and 127.0.0.1), from a throwaway authority."""
    directory = tmp_path_factory.mktemp("tls")
    authority = trustme.CA()
    issued = authority.issue_cert(PUBLIC_HOST, "127.0.0.1")
    chain, key = directory / "fullchain.pem", directory / "privkey.pem"
    issued.private_key_pem.write_to_path(str(key))
    chain.write_bytes(b"".join(blob.bytes() for blob in issued.cert_chain_pems))
    context = ssl.create_default_context()
    authority.configure_trust(context)
    return chain, key, context


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The server with the recipe's shortlink.toml (its path and port set by the environment)."""
    server = LiveServer(tmp_path_factory.mktemp("behind-proxy"))
    server.config.write_text((DEPLOY / "shortlink.toml").read_text())
    del server.env["SHORTLINK_LINKS_SHORT_HOST"]  # the file's https://sho.rt, as deployed
    server.start()
    key = server.create_key("proxy@example.com")
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    for body in (
        {"originalUrl": "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "customCode": "video"},
        {"originalUrl": "https://example.com/secret", "customCode": "locked", "password": "open sesame"},
        {"originalUrl": "https://example.com/other", "customCode": "other", "password": "open sesame"},
    ):
        status, answer = server.request("POST", "/api/v1/links", json.dumps(body), headers)
        assert status == 201, answer
    yield server
    server.stop()


def wait_for_port(port: int, process: subprocess.Popen, log: Path) -> None:

    def listening() -> bool:
        if process.poll() is not None:
            pytest.fail(f"the proxy exited: {log.read_text(errors='replace') if log.exists() else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    wait_for(listening, 30, "the proxy to listen")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def nginx(tmp_path_factory, server, certificate):
    binary = find_or_install("nginx", "nginx", "the nginx recipe test")
    directory = tmp_path_factory.mktemp("nginx")
    chain, key, _ = certificate
    https_port, http_port = free_port(), free_port()
    site = substituted(
        (DEPLOY / "nginx.conf").read_text(),
        {
            "listen 80;": f"listen 127.0.0.1:{http_port};",
            "listen [::]:80;": "",
            "listen 443 ssl http2;": f"listen 127.0.0.1:{https_port} ssl http2;",
            "listen [::]:443 ssl http2;": "",
            "/etc/letsencrypt/live/sho.rt/fullchain.pem": str(chain),
            "/etc/letsencrypt/live/sho.rt/privkey.pem": str(key),
            "http://127.0.0.1:8000": server.base_url,
        },
    )
    (directory / "site.conf").write_text(site)
    temporary = "".join(
        f"{kind}_temp_path {directory / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # What /etc/nginx/nginx.conf provides around a site, in this directory; one process
    # (no master/worker split, so no switch to another user).
    (directory / "nginx.conf").write_text(
        f"daemon off; master_process off; pid {directory / 'nginx.pid'}; error_log {directory / 'error.log'};"
        f"events {{}} http {{ access_log {directory / 'access.log'}; {temporary} include {directory / 'site.conf'}; }}"
    )
    log = directory / "error.log"
    process = subprocess.Popen(
        [binary, "-p", str(directory), "-e", str(log), "-c", str(directory / "nginx.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(https_port, process, log)
    yield https_port, http_port
    stop(process)


@pytest.fixture(scope="module")
def caddy(tmp_path_factory, server, certificate):
    binary = find_or_install("caddy", "caddy", "the Caddy recipe test")
    directory = tmp_path_factory.mktemp("caddy")
    chain, key, _ = certificate
    port = free_port()
    # Global options for a test: no admin endpoint, no port-80 redirect listener, state in
    # this directory, and the certificate made here instead of one from Let's Encrypt.
    options = f"{{\n\tadmin off\n\tauto_https disable_redirects\n\tdefault_sni {PUBLIC_HOST}\n}}\n"
    site = substituted(
        (DEPLOY / "Caddyfile").read_text(),
        {
            "sho.rt {": f"https://{PUBLIC_HOST}:{port} {{\n\ttls {chain} {key}",
            "127.0.0.1:8000": f"127.0.0.1:{server.port}",
        },
    )
    (directory / "Caddyfile").write_text(options + site)
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
    yield port
    stop(process)


def through_proxy(
    port: int, context: ssl.SSLContext, visitor: str, method: str, path: str, **headers: str
) -> tuple[int, str]:
    """One https request to the proxy from the visitor's address (any 127.x address is this machine)."""
    connection = http.client.HTTPSConnection(
        "127.0.0.1", port, context=context, source_address=(visitor, 0), timeout=15
    )
    body = None
    if method == "POST":
        body = "password=wrong+guess"
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    # A person's browser: password posts from bots are never checked, so spend no attempt.
    connection.request(method, path, body=body, headers={"Host": PUBLIC_HOST, "User-Agent": IPHONE, **headers})
    response = connection.getresponse()
    body = response.read().decode()
    connection.close()
    return response.status, body


def check_visitors_are_seen_as_themselves(port: int, context: ssl.SSLContext, code: str) -> None:
    # 127.0.0.2 spends its own attempts, claiming in X-Forwarded-For to be 127.0.0.3.
    statuses = [
        through_proxy(port, context, "127.0.0.2", "POST", f"/l/{code}", **{"X-Forwarded-For": "127.0.0.3"})[0]
        for _ in range(6)
    ]
    assert statuses == [403] * 5 + [429]
    # 127.0.0.3 still has every attempt: the server saw 127.0.0.2 above, neither the proxy's
    # address (one bucket for everyone) nor the forged one.
    assert through_proxy(port, context, "127.0.0.3", "POST", f"/l/{code}")[0] == 403


def check_public_https_host_is_seen(port: int, context: ssl.SSLContext) -> None:
    status, page = through_proxy(port, context, "127.0.0.4", "GET", "/l/video", **{"User-Agent": INSTAGRAM_IOS})
    assert status == 200
    # The escape to the system browser is this very short URL: the public host, over https.
    assert f'href="x-safari-https://{PUBLIC_HOST}/l/video?iab=1"' in page


def test_nginx_recipe_passes_the_visitor_address_and_the_public_https_host(nginx, certificate):
    https_port, http_port = nginx
    _, _, context = certificate
    check_visitors_are_seen_as_themselves(https_port, context, "locked")
    check_public_https_host_is_seen(https_port, context)
    # Plain http is sent to https on the same host.
    connection = http.client.HTTPConnection("127.0.0.1", http_port, timeout=15)
    connection.request("GET", "/l/video", headers={"Host": PUBLIC_HOST})
    redirect = connection.getresponse()
    assert redirect.status == 301 and redirect.getheader("Location") == f"https://{PUBLIC_HOST}/l/video"
    connection.close()


def test_caddy_recipe_passes_the_visitor_address_and_the_public_https_host(caddy, certificate):
    _, _, context = certificate
    check_visitors_are_seen_as_themselves(caddy, context, "other")
    check_public_https_host_is_seen(caddy, context)
