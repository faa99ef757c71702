"""The association files checked as Apple's and Google's validators do: `shortlink doctor` on a
live server passes, and each documented mistake, served by a real local HTTP server, is named."""

from __future__ import annotations

import asyncio
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from shortlink.applinks.check import CHECK_SECONDS, HostCheck, Target, check_hosts
from shortlink.applinks.schema import AndroidApp, IosApp
from shortlink.fetcher.addresses import AddressPolicy, any_address
from tests.applinks.test_apps_api import FINGERPRINT
from tests.conftest import run_cli
from tests.support.helpers import serve_in_background, wait_for
from throwaway.live_server import LiveServer

IOS = IosApp(team_id="ABCDE12345", bundle_id="com.example.app", paths=["/l/*"])
ANDROID = AndroidApp(package="com.example", sha256_fingerprints=[FINGERPRINT], paths=["/l/*"])
GOOD_APPLE = {"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/l/*"}]}]}}
GOOD_ANDROID = [
    {
        "relation": ["delegate_permission/common.handle_all_urls"],
        "target": {
            "namespace": "android_app",
            "package_name": "com.example",
            "sha256_cert_fingerprints": [FINGERPRINT],
        },
    }
]


def check_host(
    host: str,
    base_url: str,
    ios: list[IosApp],
    android: list[AndroidApp],
    via: str | None = None,
    local: bool = False,
    policy: AddressPolicy = any_address,
    seconds: float = CHECK_SECONDS,
) -> list[HostCheck]:
    """One host checked as doctor and the dashboard check it; these tests' servers are on
    127.0.0.1, so any address is allowed unless a test says otherwise."""
    return asyncio.run(check_hosts([Target(host, base_url, ios, android, policy, via, local)], seconds))


def statement(**target) -> list:
    return [{**GOOD_ANDROID[0], "target": {**GOOD_ANDROID[0]["target"], **target}}]


JSON = {"Content-Type": "application/json"}
# host → (status, headers, body) for both files: each host is one deliberate mistake.
CASES: dict[str, tuple[int, dict[str, str], object]] = {
    "good.test": (200, JSON, None),
    "redirect.test": (301, {"Location": "https://www.redirect.test/.well-known/x"}, b""),
    "missing.test": (404, JSON, b"{}"),
    "html.test": (200, {"Content-Type": "text/html"}, None),
    "broken.test": (200, JSON, b"{not json"),
    "other-app.test": (200, JSON, "other"),
    "lowercase.test": (200, JSON, "lowercase"),
    "no-relation.test": (200, JSON, "no-relation"),
}
# What each mistake is called, for Apple's file and for Google's.
EXPECTED = {
    "good.test": ([], []),
    "redirect.test": (["redirects (301 to https://www.redirect.test/.well-known/x); Apple follows no redirect"],
                      ["redirects (301"]),
    "missing.test": (["answers 404, not 200"], ["answers 404, not 200"]),
    "html.test": (["is served as text/html, not application/json"], ["is served as text/html, not application/json"]),
    "broken.test": (["is not valid JSON"], ["is not valid JSON"]),
    "other-app.test": (["'ABCDE1234.com.other' is not TEAMID.bundle.id", "does not name ABCDE12345.com.example.app"],
                       ["does not name com.example"]),
    "lowercase.test": (["ABCDE12345.com.example.app is missing the paths /l/*"],
                       ["is not 32 upper-case hex bytes", f"com.example is missing the fingerprint {FINGERPRINT}"]),
    "no-relation.test": (["has no applinks.details list"],
                         ["lacks the relation delegate_permission/common.handle_all_urls",
                          "does not name com.example"]),
}  # fmt: skip


def body_for(kind: object, apple: bool) -> bytes:
    if isinstance(kind, bytes):
        return kind
    document: object
    if kind is None:
        document = GOOD_APPLE if apple else GOOD_ANDROID
    elif kind == "other":
        document = (
            {"applinks": {"details": [{"appIDs": ["ABCDE1234.com.other"], "components": [{"/": "/*"}]}]}}
            if apple
            else statement(package_name="com.other")
        )
    elif kind == "lowercase":
        document = (
            {"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/x/*"}]}]}}
            if apple
            else statement(sha256_cert_fingerprints=[FINGERPRINT.lower()])
        )
    else:
        document = {"webcredentials": {"apps": []}} if apple else [{**GOOD_ANDROID[0], "relation": []}]
    return json.dumps(document).encode()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status, headers, kind = CASES[self.headers["Host"]]
        body = body_for(kind, apple="apple" in self.path)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def mistakes_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    serve_in_background(server)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("host", sorted(CASES))
def test_each_mistake_is_named_in_one_line(mistakes_server, host):
    apple, android = check_host(host, f"https://{host}", [IOS], [ANDROID], via=mistakes_server)
    assert (apple.file, android.file) == ("/.well-known/apple-app-site-association", "/.well-known/assetlinks.json")
    for result, expected in ((apple, EXPECTED[host][0]), (android, EXPECTED[host][1])):
        assert len(result.mistakes) == len(expected), result.mistakes
        for line, words in zip(result.mistakes, expected, strict=True):
            assert words in line and "\n" not in line and line.startswith(f"https://{host}/.well-known/"), line
    # Over plain http a validator fetches nothing: said once per file, except on a development host.
    plain = check_host(host, f"http://{host}", [IOS], [], via=mistakes_server)[0].mistakes
    assert sum("is plain http; Apple fetches only https://" in line for line in plain) == 1
    local = check_host(host, f"http://{host}", [IOS], [], via=mistakes_server, local=True)[0].mistakes
    assert not any("plain http" in line for line in local)


def test_an_unreachable_host_is_one_line():
    (result,) = check_host("nothing.test", "https://nothing.test", [IOS], [], via="http://127.0.0.1:9")
    assert len(result.mistakes) == 1 and "could not be fetched" in result.mistakes[0]


@pytest.mark.slow
def test_doctor_checks_every_host_on_a_live_server(tmp_path):
    server = LiveServer(tmp_path).start()
    try:
        db = str(server.db)
        server.create_key("owner@example.com")
        run_cli("domain", "add", "--email", "owner@example.com", "go.example.com", "--db", db)
        run_cli("app", "add", "--ios-team-id", "ZYXWV98765", "--ios-bundle-id", "org.service.app", "--db", db)
        run_cli(
            "app", "add", "--email", "owner@example.com", "--ios-team-id", "ABCDE12345", "--ios-bundle-id",
            "com.example.app", "--android-package", "com.example", "--android-sha256", FINGERPRINT, "--db", db,
        )  # fmt: skip
        # Changes made by another process reach the server within a second (docs/behaviour.md).
        wait_for(
            lambda: server.request("GET", "/.well-known/assetlinks.json", headers={"Host": "go.example.com"})[0] == 200,
            what="the server to serve the new app's file",
        )
        # The validators' view: https on the public names, fetched here through the server's address.
        config = tmp_path / "doctor.toml"
        config.write_text('[links]\nshort_host = "https://sho.rt"\n[network]\ntrusted_proxies = ["127.0.0.1/32"]\n')
        args = ("doctor", "--config", str(config), "--db", db, "--via", server.base_url, "--json")
        result = run_cli(*args, check=False)
        report = json.loads(result.stdout)
        assert result.returncode == 0, report["findings"]
        assert report["facts"]["association_files_checked"] == [
            "sho.rt/.well-known/apple-app-site-association",
            "go.example.com/.well-known/apple-app-site-association",
            "go.example.com/.well-known/assetlinks.json",
        ]
        # Served over plain http, no validator would fetch them: one line per file says so.
        config.write_text('[links]\nshort_host = "http://sho.rt"\n')
        text = run_cli(*args[:-1], check=False)
        assert text.returncode == 1
        lines = [line for line in text.stdout.splitlines() if line.startswith("PROBLEM [app links]")]
        assert [line.split(" is plain http")[0] for line in lines] == [
            "PROBLEM [app links] http://sho.rt/.well-known/apple-app-site-association",
            "PROBLEM [app links] http://go.example.com/.well-known/apple-app-site-association",
            "PROBLEM [app links] http://go.example.com/.well-known/assetlinks.json",
        ], text.stdout
    finally:
        server.stop()
