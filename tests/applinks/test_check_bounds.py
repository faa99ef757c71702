"""The association check holds what a host it fetches from can make it hold: a body is read to
128 KiB and no further, the whole check ends at its deadline however slowly a body drips, and it
fetches only from addresses the title fetcher's policy allows (no private ones by default). A
real server keeps answering while a check waits on such a host."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import httpx
import pytest

from shortlink.accounts import service as accounts
from shortlink.applinks.check import ANDROID_PATH, APPLE_PATH, MAX_BYTES, Target, check_hosts
from shortlink.applinks.schema import AndroidApp, IosApp
from shortlink.fetcher.addresses import AddressPolicy, any_address, public_only
from shortlink.storage import connect
from tests.applinks.test_apps_api import FINGERPRINT
from tests.conftest import run_cli
from tests.support.dashboard import PASSWORD, as_browser, csrf_of, make_account, signed_in
from tests.support.helpers import assert_answered_promptly, serve_in_background, wait_for, wait_for_domain
from throwaway.live_server import LiveServer

IOS = IosApp(team_id="ABCDE12345", bundle_id="com.example.app", paths=["/l/*"])
ANDROID = AndroidApp(package="com.example", sha256_fingerprints=[FINGERPRINT], paths=["/l/*"])
CHUNK = b"[" + b" " * 65535
DRIP_SECONDS = 0.05


class Hostile(ThreadingHTTPServer):
    """Bodies that never end: "endless.test" as fast as the socket takes them, "drip.test" a
    byte every DRIP_SECONDS. Any other host (an address): the Apple file is endless, the
    Android one drips. Counts each kind's requests, and those the client hung up on."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), HostileHandler)
        self.started: Counter[str] = Counter()
        self.hung_up: Counter[str] = Counter()
        self.sent: Counter[str] = Counter()
        self.stop = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class HostileHandler(BaseHTTPRequestHandler):
    server: Hostile

    def do_GET(self) -> None:
        host = urlsplit(f"//{self.headers['Host']}").hostname or ""
        kind = {"endless.test": "endless", "drip.test": "drip"}.get(host)
        kind = kind or ("endless" if self.path == APPLE_PATH else "drip")
        self.server.started[kind] += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()  # no length: the body ends when the connection does
        try:
            while not self.server.stop.is_set():
                self.wfile.write(CHUNK if kind == "endless" else b" ")
                self.wfile.flush()
                self.server.sent[kind] += len(CHUNK) if kind == "endless" else 1
                if kind == "drip":
                    self.server.stop.wait(DRIP_SECONDS)
        except OSError:
            self.server.hung_up[kind] += 1

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def hostile():
    server = Hostile()
    serve_in_background(server)
    yield server
    server.stop.set()
    server.shutdown()
    server.server_close()


def check(targets: list[Target], seconds: float):
    started = time.monotonic()
    results = asyncio.run(check_hosts(targets, seconds))
    return results, time.monotonic() - started


def target(host: str, server: Hostile, policy: AddressPolicy = any_address, ios=(IOS,), android=()) -> Target:
    return Target(host, f"https://{host}", list(ios), list(android), policy, via=server.url)


def test_an_endless_body_is_cut_at_128_kib_with_one_line(hostile):
    targets = [target("endless.test", hostile, android=[ANDROID])]
    (apple, android), elapsed = check(targets, 30.0)
    assert apple.mistakes == [
        f"https://endless.test{APPLE_PATH} is larger than {MAX_BYTES} bytes; Apple reads at most that"
    ]
    assert android.mistakes == [
        f"https://endless.test{ANDROID_PATH} is larger than {MAX_BYTES} bytes; the check reads no more (Apple's limit)"
    ]
    # The check hung up on both, well before its deadline: nothing more was read.
    wait_for(lambda: hostile.hung_up["endless"] == 2, timeout=30, what="the check to hang up")
    assert elapsed < 30.0


def test_a_dripping_body_ends_at_the_checks_deadline_for_every_file_at_once(hostile):
    # Two hosts, both files each: four drips share the one deadline (not one each, in turn).
    targets = [target("drip.test", hostile, android=[ANDROID]) for _ in range(2)]
    results, elapsed = check(targets, 1.5)
    assert len(results) == 4
    for result in results:
        assert result.mistakes == [
            f"https://drip.test{result.file} could not be fetched: no whole answer before the check's time limit"
        ]
    assert hostile.started["drip"] == 4 and hostile.sent["drip"] >= 4  # bytes were coming, slowly
    assert 1.5 <= elapsed < 1.5 + 10  # generous: the point is that it is not 4 × 1.5 s, or forever
    wait_for(lambda: hostile.hung_up["drip"] == 4, timeout=30, what="the check to hang up")


def test_the_default_policy_refuses_a_private_address_before_connecting(hostile):
    port = urlsplit(hostile.url).port
    refused = Target("127.0.0.1", f"http://127.0.0.1:{port}", [IOS], [ANDROID], public_only)
    results, _ = check([refused], 30.0)
    assert [result.mistakes for result in results] == [
        [
            f"http://127.0.0.1:{port}{path} could not be fetched: "
            "refused: 127.0.0.1 resolves to the non-public address 127.0.0.1"
        ]
        for path in (APPLE_PATH, ANDROID_PATH)
    ]
    assert sum(hostile.started.values()) == 0
    # The same host with private addresses allowed is fetched (and cut at the cap).
    allowed = Target("127.0.0.1", f"http://127.0.0.1:{port}", [IOS], [], any_address, local=True)
    ((apple,), _) = check([allowed], 30.0)
    assert apple.mistakes == [
        f"http://127.0.0.1:{port}{APPLE_PATH} is larger than {MAX_BYTES} bytes; Apple reads at most that"
    ]


@pytest.mark.slow
def test_doctor_refuses_a_custom_domain_on_a_private_address_unless_told_via(tmp_path, hostile):
    db = str(tmp_path / "doctor.db")
    run_cli("key", "create", "--email", "owner@example.com", "--db", db)
    run_cli("domain", "add", "--email", "owner@example.com", "127.0.0.1", "--db", db)
    run_cli("app", "add", "--email", "owner@example.com", "--ios-team-id", "ABCDE12345", "--ios-bundle-id",
            "com.example.app", "--db", db)  # fmt: skip
    config = tmp_path / "doctor.toml"
    config.write_text('[links]\nshort_host = "https://sho.rt"\n')
    refused = run_cli("doctor", "--config", str(config), "--db", db, check=False)
    assert refused.returncode == 1
    assert (
        f"PROBLEM [app links] https://127.0.0.1{APPLE_PATH} could not be fetched: "
        "refused: 127.0.0.1 resolves to the non-public address 127.0.0.1"
    ) in refused.stdout, refused.stdout
    assert sum(hostile.started.values()) == 0
    # --via names the operator's own address: fetched (and cut at the cap).
    fetched = run_cli("doctor", "--config", str(config), "--db", db, "--via", hostile.url, check=False)
    assert f"PROBLEM [app links] https://127.0.0.1{APPLE_PATH} is larger than {MAX_BYTES} bytes" in fetched.stdout


@pytest.fixture
def make_client(make_client):
    return lambda **overrides: as_browser(make_client(**overrides), "links_short_host" in overrides)


def add_app_and_domain(client, conn, domain: str) -> None:
    token = csrf_of(client.get("/apps").text)
    fields = {"csrf": token, "ios_team_id": "ABCDE12345", "ios_bundle_id": "com.example.app"}
    assert client.post("/apps", data=fields, follow_redirects=False).status_code == 303
    accounts.add_domain(conn, "owner@example.com", domain)
    wait_for_domain(client, domain)


def test_the_dashboards_check_refuses_a_domain_on_a_private_address_by_default(make_client, conn, hostile):
    port = urlsplit(hostile.url).port
    client = signed_in(make_client, conn, links_short_host=f"http://sho.rt:{port}")
    add_app_and_domain(client, conn, "127.0.0.1")
    checked = client.post("/apps/check", data={"csrf": csrf_of(client.get("/apps").text)})
    assert checked.status_code == 200
    mistakes = re.findall(r"<li>(http://127\.0\.0\.1:\d+/[^<]+)</li>", checked.text)
    assert mistakes == [
        f"http://127.0.0.1:{port}{APPLE_PATH} could not be fetched: "
        "refused: 127.0.0.1 resolves to the non-public address 127.0.0.1"
    ], checked.text
    assert sum(hostile.started.values()) == 0


@pytest.mark.slow
def test_a_server_answers_healthz_at_once_while_its_check_holds_an_endless_and_a_dripping_body(tmp_path, hostile):
    port = urlsplit(hostile.url).port
    server = LiveServer(
        tmp_path, links_short_host=f"http://127.0.0.1:{port}", fetcher_allow_private_addresses="true"
    ).start()
    try:
        conn = connect(str(server.db))
        try:
            make_account(conn, "owner@example.com")
        finally:
            conn.close()
        db = str(server.db)
        run_cli(
            "app", "add", "--email", "owner@example.com", "--ios-team-id", "ABCDE12345", "--ios-bundle-id",
            "com.example.app", "--android-package", "com.example", "--android-sha256", FINGERPRINT, "--db", db,
        )  # fmt: skip
        run_cli("domain", "add", "--email", "owner@example.com", "127.0.0.1", "--db", db)
        with httpx.Client(base_url=server.base_url, timeout=60) as browser:
            form = {"email": "owner@example.com", "password": PASSWORD, "csrf": csrf_of(browser.get("/login").text)}
            assert browser.post("/login", data=form, follow_redirects=False).status_code == 303
            wait_for(lambda: "127.0.0.1/.well-known" in browser.get("/apps").text, what="the server to see the domain")
            token = csrf_of(browser.get("/apps").text)
            answer: list[httpx.Response] = []
            done = threading.Event()

            def press_check() -> None:
                try:
                    answer.append(browser.post("/apps/check", data={"csrf": token}))
                finally:
                    done.set()

            started = time.monotonic()
            threading.Thread(target=press_check, daemon=True).start()
            wait_for(lambda: hostile.started["drip"] == 1, what="the check to be downloading")
            timings: list[float] = []
            with httpx.Client(base_url=server.base_url, timeout=10) as prober:
                while not done.wait(0.05):  # a probe every 50 ms until the check answers
                    before = time.monotonic()
                    assert prober.get("/healthz").status_code == 200
                    timings.append(time.monotonic() - before)
            elapsed = time.monotonic() - started
        (page,) = answer
        assert page.status_code == 200
        assert f"{APPLE_PATH} is larger than {MAX_BYTES} bytes" in page.text
        assert f"{ANDROID_PATH} could not be fetched: no whole answer before the check&#39;s time limit" in page.text
        assert elapsed < 10 + 20  # the check's deadline (10 s), generously
        assert len(timings) >= 20
        assert_answered_promptly(timings)
        assert hostile.sent["endless"] < 64 * 2**20  # cut, not held: the socket's buffers at most
    finally:
        server.stop()
