"""What the browser tests share: the stand-in destination site, Chromium as they launch it,
a live server with a dashboard account, phone contexts, and the JSON API of a live server."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
import ssl
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import trustme
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from shortlink.accounts import sessions
from shortlink.storage import connect
from tests.support import paths
from tests.support.dashboard import password_hash
from tests.support.helpers import serve_in_background
from throwaway.debian import find_or_install
from throwaway.live_server import LiveServer, free_port

ARTIFACTS = paths.ARTIFACTS
# Screenshots of what the browser tests see, for people to look at (the README's comes from
# one): kept in test-artifacts/ only when KEEP_SCREENSHOTS is set (`make screenshots`), as
# each costs Chromium time and no test reads them (docs/performance.md).
SCREENSHOTS = bool(os.environ.get("KEEP_SCREENSHOTS"))
VIDEO = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
# The stand-in destination's certificate. Chromium sends www.youtube.com to HTTPS whatever
# the link says (the name is on its HSTS preload list), so the stand-in must speak it.
DESTINATION_CERTIFICATE = trustme.CA().issue_cert("www.youtube.com")
PHONE = {"width": 375, "height": 812}
# How long a page may take to show what a step makes it show: generous, as a loaded machine is slow.
VISIBLE_WITHIN_MS = 30_000
DESKTOP = {"width": 1280, "height": 900}


class FakeYouTube(http.server.BaseHTTPRequestHandler):
    """A real local web server standing in for the destination site."""

    def do_GET(self):
        body = f"<!doctype html><title>Destination</title><p id=path>{self.path}</p>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def keep_screenshot(page: Any, name: str, full_page: bool = False) -> None:
    """test-artifacts/<name>.png, when screenshots are asked for."""
    if SCREENSHOTS:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=full_page)


@contextmanager
def destination_site() -> Iterator[int]:
    """The stand-in destination, over HTTPS on a free port of 127.0.0.1; yields the port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), FakeYouTube)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    DESTINATION_CERTIFICATE.configure_cert(tls)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    serve_in_background(server)
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


@contextmanager
def chromium(destination_port: int):
    """Debian's Chromium (installed when missing), headless, sending www.youtube.com to the
    stand-in destination and accepting its certificate (that one key only)."""
    from playwright.sync_api import sync_playwright

    executable = find_or_install("chromium", "chromium", "browser tests")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable,
            args=[
                "--no-sandbox",
                f"--host-resolver-rules=MAP www.youtube.com 127.0.0.1:{destination_port}",
                f"--ignore-certificate-errors-spki-list={_public_key_hash(DESTINATION_CERTIFICATE)}",
            ],
        )
        yield launched
        launched.close()


def _public_key_hash(certificate: trustme.LeafCert) -> str:
    """What Chromium's --ignore-certificate-errors-spki-list takes: the base64 SHA-256 of
    the certificate's public key."""
    leaf = x509.load_pem_x509_certificate(certificate.cert_chain_pems[0].bytes())
    key = leaf.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(key).digest()).decode()


@contextmanager
def chromium_and_destination() -> Iterator:
    """Chromium (see `chromium`) with the stand-in destination site running."""
    with destination_site() as port, chromium(port) as launched:
        yield launched


@contextmanager
def dashboard_server(
    directory: Path,
    email: str,
    password: str,
    prepare: Callable[[LiveServer], None] = lambda _server: None,
    **settings: str,
) -> Iterator[LiveServer]:
    """A live server process on which `email` signs in to the dashboard with `password`;
    `prepare` runs on its database before it starts (demo links and clicks, say); `settings`
    as LiveServer takes them."""
    server = LiveServer(directory, **settings)
    conn = connect(server.db)
    sessions.set_password(conn, email, password_hash(password))
    conn.close()
    prepare(server)
    server.start()
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        yield server
    finally:
        server.stop()


def phone(browser, user_agent, **options):
    return browser.new_context(
        **{
            "user_agent": user_agent,
            "viewport": {"width": 390, "height": 844},
            "device_scale_factor": 2,
            "is_mobile": True,
            "has_touch": True,
            **options,
        }
    )


def api(server: LiveServer, method: str, path: str, key: str, body: dict | None = None):
    """The `data` of a JSON API answer."""
    req = urllib.request.Request(
        server.base_url + path,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as response:
        return json.loads(response.read())["data"]


def sign_in_with_chromium(page, server: LiveServer, email: str, password: str) -> None:
    """Through the dashboard's sign-in form; the page is on the home page after."""
    page.goto(server.base_url + "/")
    assert page.url == server.base_url + "/login"
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(server.base_url + "/")


def wait_for_text(page, url: str, text: str, timeout: float = 15) -> None:
    """Reload until the page shows `text` (clicks are written in batches, shortly after)."""
    wait_for_page(page, lambda: page.goto(url) is not None and text in page.content(), timeout, f"{text!r} on {url}")


def wait_for_page(page, condition: Callable[[], object], timeout: float = 15, what: str = "the page") -> None:
    """`wait_for` for a page: Playwright hands the page its events only inside its own calls, so
    the pause between looks is the page's own wait."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        page.wait_for_timeout(100)
