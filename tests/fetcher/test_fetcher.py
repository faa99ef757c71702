"""The title fetcher against real HTTP servers on loopback: pages, limits, races, restarts, SSRF."""

from __future__ import annotations

import gzip
import ipaddress
import logging
import ssl
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import trustme
from litestar.testing import TestClient

from shortlink.fetcher.addresses import (
    FetchError,
    OwnService,
    address_policy,
    is_public_address,
    own_host_entries,
    public_only,
    system_resolver,
)
from shortlink.fetcher.ssrf import MAX_BODY_BYTES, MAX_REDIRECTS, fetch_html
from shortlink.fetcher.worker import USER_AGENT, TitleFetcher
from shortlink.links.schema import CreateLink
from shortlink.storage.sqlite import SqliteDatabase
from shortlink.web.asgi import create_app
from tests.conftest import SHORT_HOST, run_cli
from tests.support.helpers import serve_in_background, store_link, wait_for, wait_for_async

WAIT_SECONDS = 10.0
# The fetcher resolves the service's own hosts before each fetch (never to fetch itself): a short
# host /etc/hosts answers for, since a DNS lookup of sho.rt waits on a server outside the test
# (one lost packet is glibc's 5-s retry, the whole fetch's timeout).
FETCHING = {
    "fetcher_enabled": True,
    "fetcher_allow_private_addresses": True,
    "links_short_host": "http://localhost:8000",
}


@dataclass
class Route:
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    hold: threading.Event | None = None  # answer only once this is set (or after 10 s)
    hold_first_only: bool = False
    received: threading.Event = field(default_factory=threading.Event)
    statuses: list[int] = field(default_factory=list)  # served in turn before `status`
    sent_bytes: int = 0


class Site:
    """A real HTTP server on a loopback address with a table of routes."""

    def __init__(self, host: str = "127.0.0.1"):
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                site.requests.append((self.path, dict(self.headers)))
                route = site.routes.get(self.path)
                if route is None:
                    self.send_error(404)
                    return
                first = not route.received.is_set()
                route.received.set()
                if route.hold is not None and (first or not route.hold_first_only):
                    route.hold.wait(WAIT_SECONDS)
                status = route.statuses.pop(0) if route.statuses else route.status
                self.send_response(status)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(route.body)))
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    for start in range(0, len(route.body), 65536):
                        self.wfile.write(route.body[start : start + 65536])
                        route.sent_bytes += len(route.body[start : start + 65536])
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the fetcher stopped reading

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.host, self.port = host, self.server.server_address[1]
        self.thread = serve_in_background(self.server)

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"

    def add(self, path: str, **route) -> Route:
        self.routes[path] = Route(**route)
        return self.routes[path]

    def page(self, path: str, html: str, **route) -> Route:
        return self.add(path, body=html.encode("utf-8"), **route)

    def redirect(self, path: str, location: str, status: int = 302) -> Route:
        return self.add(path, status=status, headers={"Location": location})

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def close(self) -> None:
        for route in self.routes.values():
            if route.hold is not None:
                route.hold.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def make_site() -> Iterator[Callable[..., Site]]:
    sites: list[Site] = []

    def make(host: str = "127.0.0.1") -> Site:
        sites.append(Site(host))
        return sites[-1]

    yield make
    for site in sites:
        site.close()


@pytest.fixture
def site(make_site) -> Site:
    return make_site()


@pytest.fixture
def fetcher_log() -> Iterator[list[str]]:
    """What the fetcher logs (the app's logging setup replaces root handlers, so caplog misses it)."""
    messages: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: messages.append(record.getMessage())
    logger = logging.getLogger("shortlink.fetcher")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield messages
    logger.removeHandler(handler)
    logger.setLevel(level)


def pending(conn, link_public_id: str):
    return conn.execute(
        "SELECT p.* FROM pending_fetches p JOIN links l ON l.id = p.link_id WHERE l.public_id = ?", (link_public_id,)
    ).fetchone()


def create(client: TestClient, auth, url: str, **fields) -> dict:
    response = client.post("/api/v1/links", json={"originalUrl": url, **fields}, headers=auth)
    assert response.status_code == 201, response.text
    return response.json()["data"]


def fetched_link(client: TestClient, auth, conn, link: dict) -> dict:
    """The link once its pending fetch is finished (saved or given up)."""
    wait_for(lambda: pending(conn, link["id"]) is None, WAIT_SECONDS, "the fetch to finish")
    return client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]


# --- through the API, private addresses allowed -------------------------------------------------


def test_og_title_description_and_image_are_filled(make_client, auth, conn, site):
    site.page(
        "/article",
        """<html><head><title>Plain</title>
        <meta property="og:title" content="The &amp; OG   title">
        <meta property="og:description" content="What it is about">
        <meta property="og:image" content="/images/card.png"></head></html>""",
    )
    client = make_client(**FETCHING)
    link = create(client, auth, site.url("/article"))
    assert link["title"] is None
    result = fetched_link(client, auth, conn, link)
    assert result["title"] == "The & OG title"
    assert result["description"] == "What it is about"
    assert result["ogImage"] == site.url("/images/card.png")
    path, headers = site.requests[0]
    assert path == "/article"
    assert headers["User-Agent"] == USER_AGENT and "shortlink" in USER_AGENT
    assert headers["Host"] == f"127.0.0.1:{site.port}"


def test_plain_title_and_windows_1251_page(make_client, auth, conn, site):
    site.page("/plain", "<title>\n  Just   a &lt;plain&gt; page </title><meta name='description' content='Described'>")
    site.add(
        "/cyrillic",
        body="<title>Новости дня</title>".encode("windows-1251"),
        content_type="text/html; charset=windows-1251",
    )
    site.add(
        "/meta-charset",
        body=('<meta charset="windows-1251"><title>Погода</title>'.encode("windows-1251")),
        content_type="text/html",
    )
    client = make_client(**FETCHING)
    links = [create(client, auth, site.url(path)) for path in ("/plain", "/cyrillic", "/meta-charset")]
    results = [fetched_link(client, auth, conn, link) for link in links]
    assert results[0]["title"] == "Just a <plain> page"
    assert results[0]["description"] == "Described" and results[0]["ogImage"] is None
    assert results[1]["title"] == "Новости дня"
    assert results[2]["title"] == "Погода"


def test_non_html_destination_is_left_alone_without_retries(make_client, auth, conn, site, fetcher_log):
    site.add("/file.pdf", body=b"%PDF-1.7 <title>not a page</title>", content_type="application/pdf")
    client = make_client(**FETCHING, fetcher_max_attempts=3)
    result = fetched_link(client, auth, conn, create(client, auth, site.url("/file.pdf")))
    assert result["title"] is None and result["description"] is None
    assert site.paths() == ["/file.pdf"]
    assert "not HTML: application/pdf" in " ".join(fetcher_log)


def test_slow_site_hits_the_total_timeout(make_client, auth, conn, site, fetcher_log):
    site.page("/slow", "<title>Too late</title>", hold=threading.Event())
    client = make_client(**FETCHING, fetcher_timeout_seconds=0.5, fetcher_max_attempts=1)
    started = time.monotonic()
    result = fetched_link(client, auth, conn, create(client, auth, site.url("/slow")))
    assert time.monotonic() - started < 5
    assert result["title"] is None
    assert "timed out after 0.5 s" in " ".join(fetcher_log)
    assert "given up after 1 attempt" in " ".join(fetcher_log)


def test_oversized_page_is_read_only_up_to_1_mib(make_client, auth, conn, site):
    # The og:title lies beyond the first MiB: had the whole page been read, it would win. The
    # page is larger than loopback socket buffers grow (the tcp_rmem and tcp_wmem maxima, often
    # 32 and 4 MiB), so the server cannot have sent it all when the fetcher hangs up.
    padding = "<p>" + "x" * (48 * MAX_BODY_BYTES) + "</p>"
    html = f"<title>Early title</title>{padding}<meta property='og:title' content='Late'>"
    route = site.page("/huge", html)
    client = make_client(**FETCHING)
    result = fetched_link(client, auth, conn, create(client, auth, site.url("/huge")))
    assert result["title"] == "Early title"
    assert route.sent_bytes < len(route.body)  # the fetcher hung up early


def test_redirect_chain_is_followed_and_the_image_resolved_against_the_final_url(make_client, auth, conn, site):
    site.redirect("/r1", "/r2", status=301)
    site.redirect("/r2", site.url("/r3"), status=307)
    site.redirect("/r3", "deep/final.html", status=303)
    site.page("/deep/final.html", "<title>Arrived</title><meta property='og:image' content='img.png'>")
    client = make_client(**FETCHING)
    result = fetched_link(client, auth, conn, create(client, auth, site.url("/r1")))
    assert result["title"] == "Arrived"
    assert result["ogImage"] == site.url("/deep/img.png")
    assert site.paths() == ["/r1", "/r2", "/r3", "/deep/final.html"]


def test_client_set_title_is_never_fetched(make_client, auth, conn, site):
    site.page("/page", "<title>Fetched</title>")
    client = make_client(**FETCHING)
    link = create(client, auth, site.url("/page"), title="Mine")
    assert pending(conn, link["id"]) is None
    # A link made after it is fetched: the fetcher has been at work past the first one.
    site.page("/later", "<title>Later</title>")
    assert fetched_link(client, auth, conn, create(client, auth, site.url("/later")))["title"] == "Later"
    assert client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]["title"] == "Mine"
    assert site.paths() == ["/later"]


def test_patch_racing_the_fetch_wins(make_client, auth, conn, site):
    release = threading.Event()
    route = site.page(
        "/held", "<title>Fetched title</title><meta name='description' content='Fetched description'>", hold=release
    )
    client = make_client(**FETCHING)
    link = create(client, auth, site.url("/held"))
    assert route.received.wait(WAIT_SECONDS)  # the fetch is in flight, its answer held back
    patched = client.patch(f"/api/v1/links/{link['id']}", json={"title": "Patched"}, headers=auth)
    assert patched.status_code == 200
    release.set()
    result = fetched_link(client, auth, conn, link)
    assert result["title"] == "Patched"
    assert result["description"] == "Fetched description"  # the fetch did complete


def test_restart_resumes_pending_fetches_and_shutdown_does_not_wait(make_config, make_client, auth, conn, site):
    route = site.page("/resume", "<title>Resumed</title>", hold=threading.Event(), hold_first_only=True)
    with TestClient(app=create_app(make_config(**FETCHING))) as first:
        link = create(first, auth, site.url("/resume"))
        assert route.received.wait(WAIT_SECONDS)
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 4  # the site holds its answer for 10 s
    row = pending(conn, link["id"])
    assert row is not None and row["attempts"] == 0
    assert row["next_attempt_at"] <= time.time() * 1000  # due at once for the next start

    second = make_client(**FETCHING)
    assert fetched_link(second, auth, conn, link)["title"] == "Resumed"
    assert site.paths() == ["/resume", "/resume"]


# --- the worker directly: retries with backoff ---------------------------------------------------


async def _run_fetcher(
    db_path, conn, make_config, urls: list[str], fetcher_options: dict | None = None, **config
) -> tuple[list[dict], list[str]]:
    """Links to `urls`, fetched by a TitleFetcher of their own until none is pending."""
    account_id = conn.execute("SELECT id FROM accounts").fetchone()[0]
    links = [store_link(conn, account_id, SHORT_HOST, CreateLink(original_url=url), fetch_title=True) for url in urls]
    saved: list[str] = []
    db = SqliteDatabase(db_path)
    fetcher = TitleFetcher(
        db,
        make_config(**FETCHING, **config).fetcher,
        on_saved=saved.append,
        retry_base_seconds=0.05,
        **(fetcher_options or {}),
    )
    await fetcher.start()
    try:
        await wait_for_async(
            lambda: all(pending(conn, link.id) is None for link in links), WAIT_SECONDS, "the fetches to finish"
        )
    finally:
        await fetcher.stop()
        db.close()
    return [
        dict(conn.execute("SELECT * FROM links WHERE public_id = ?", (link.id,)).fetchone()) for link in links
    ], saved


async def test_failures_are_retried_with_backoff_then_succeed(db_path, conn, make_config, api_key, site):
    site.page("/flaky", "<title>Third time lucky</title>", statuses=[503, 500])
    [row], saved = await _run_fetcher(db_path, conn, make_config, [site.url("/flaky")], fetcher_max_attempts=3)
    assert row["title"] == "Third time lucky"
    assert saved == [row["short_code"]]  # the visitor cache is told
    assert site.paths() == ["/flaky"] * 3


async def test_failures_give_up_after_max_attempts(db_path, conn, make_config, api_key, site, fetcher_log):
    site.page("/down", "<title>never</title>", status=503)
    [row], saved = await _run_fetcher(db_path, conn, make_config, [site.url("/down")], fetcher_max_attempts=2)
    assert row["title"] is None and saved == []
    assert site.paths() == ["/down"] * 2
    # Named by the id an operator can look up through the API, not the internal row number.
    assert f"title fetch for link {row['public_id']} given up after 2 attempt(s): HTTP 503" in fetcher_log


# --- fetch_html and the address guard ------------------------------------------------------------


def guarded_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=5)


async def test_redirects_beyond_five_are_refused(site):
    for hop in range(MAX_REDIRECTS + 1):
        site.redirect(f"/hop{hop}", f"/hop{hop + 1}")
    site.page(f"/hop{MAX_REDIRECTS + 1}", "<title>too far</title>")
    site.page(f"/hop{MAX_REDIRECTS}-ok", "<title>in reach</title>")
    async with guarded_client() as client:
        with pytest.raises(FetchError, match="more than 5 redirects") as refused:
            await fetch_html(client, site.url("/hop0"), policy=lambda *_: True, user_agent="t")
        assert refused.value.permanent
        assert site.paths() == [f"/hop{hop}" for hop in range(MAX_REDIRECTS + 1)]
        site.redirect(f"/hop{MAX_REDIRECTS - 1}", f"/hop{MAX_REDIRECTS}-ok")  # now exactly five
        page = await fetch_html(client, site.url("/hop0"), policy=lambda *_: True, user_agent="t")
    assert b"in reach" in page.body and page.url == site.url(f"/hop{MAX_REDIRECTS}-ok")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/",
        "http://10.0.0.1:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:{port}/",
        "http://[::ffff:127.0.0.1]:{port}/",
        "http://0.0.0.0:{port}/",
        "http://localhost:{port}/",
    ],
)
async def test_private_addresses_are_refused(site, url):
    site.page("/", "<title>internal</title>")
    async with guarded_client() as client:
        with pytest.raises(FetchError, match="refused") as refused:
            await fetch_html(client, url.format(port=site.port), policy=public_only, user_agent="t")
    assert refused.value.permanent
    assert site.requests == []


async def test_redirect_from_an_allowed_host_to_a_private_one_is_refused(make_site):
    allowed, internal = make_site("127.0.0.1"), make_site("127.0.0.2")
    internal.page("/secret", "<title>internal</title>")
    allowed.redirect("/go", internal.url("/secret"))
    allowed.redirect("/go10", "http://10.1.2.3/")

    def only_the_allowed_site(address, port) -> bool:  # stands in for one public server
        return (str(address), port) == ("127.0.0.1", allowed.port) or is_public_address(address)

    async with guarded_client() as client:
        for start in ("/go", "/go10"):
            with pytest.raises(FetchError, match="refused"):
                await fetch_html(client, allowed.url(start), policy=only_the_allowed_site, user_agent="t")
    assert allowed.paths() == ["/go", "/go10"]
    assert internal.requests == []


def resolver_with(names: dict[str, str], lookups: list[str] | None = None):
    """The system resolver, plus `names` (lower-case, trailing dot ignored) → an address."""

    async def resolve(host: str, port: int):
        if lookups is not None:
            lookups.append(host)
        return await system_resolver(names.get(host.lower().rstrip("."), host), port)

    return resolve


async def test_connects_to_the_checked_address_not_a_second_lookup(site):
    # "preview.test" exists only in this resolver: had httpx looked the name up
    # again, the fetch would fail. The Host header still names the original host.
    site.page("/", "<title>pinned</title>")
    lookups: list[str] = []
    checked: list[str] = []

    def policy(address, port) -> bool:
        checked.append(f"{address}:{port}")
        return True

    async with guarded_client() as client:
        page = await fetch_html(
            client,
            f"http://preview.test:{site.port}/",
            policy=policy,
            user_agent="t",
            resolve=resolver_with({"preview.test": "127.0.0.1"}, lookups),
        )
    assert b"pinned" in page.body
    assert lookups == ["preview.test"]
    assert checked == [f"127.0.0.1:{site.port}"]
    assert site.requests[0][1]["Host"] == f"preview.test:{site.port}"


async def test_the_service_itself_and_bad_redirects_are_refused(site):
    site.redirect("/bad", "http://[not-an-address/")
    site.redirect("/ftp", "ftp://example.com/file")
    async with guarded_client() as client:
        with pytest.raises(FetchError, match="this service itself"):
            await fetch_html(
                client,
                site.url("/"),
                policy=lambda *_: True,
                user_agent="t",
                own=OwnService(own_host_entries([f"127.0.0.1:{site.port}"])),
            )
        assert site.requests == []
        for path, reason in (("/bad", "invalid URL"), ("/ftp", "not an http")):
            with pytest.raises(FetchError, match=reason) as refused:
                await fetch_html(client, site.url(path), policy=lambda *_: True, user_agent="t")
            assert refused.value.permanent
    assert site.paths() == ["/bad", "/ftp"]


async def test_the_own_host_is_refused_however_it_is_spelled(site):
    site.page("/", "<title>ourselves</title>")
    own = OwnService(own_host_entries([f"sho.rt:{site.port}"]))
    resolve = resolver_with({"sho.rt": "127.0.0.1"})
    async with guarded_client() as client:
        # A trailing dot names the same host (fully qualified); case never matters.
        for host in ("sho.rt", "sho.rt.", "SHO.Rt."):
            with pytest.raises(FetchError, match="is this service itself"):
                await fetch_html(
                    client,
                    f"http://{host}:{site.port}/",
                    policy=lambda *_: True,
                    user_agent="t",
                    own=own,
                    resolve=resolve,
                )
    assert site.requests == []


async def test_addresses_of_the_own_hosts_are_refused_under_any_name(
    db_path, conn, make_config, api_key, make_site, fetcher_log
):
    ours, other = make_site(), make_site()  # "ours" stands for this service, at sho.rt:<its port>
    ours.page("/", "<title>ourselves</title>")
    other.page("/", "<title>someone else</title>")
    other.redirect("/to-us", ours.url("/"))
    lookups: list[str] = []
    resolve = resolver_with({"sho.rt": "127.0.0.1", "alias.test": "127.0.0.1"}, lookups)
    urls = [
        ours.url("/"),
        f"http://alias.test:{ours.port}/",
        f"http://[::ffff:127.0.0.1]:{ours.port}/",
        other.url("/to-us"),
        other.url("/"),
    ]
    rows, _ = await _run_fetcher(
        db_path, conn, make_config, urls, {"own_hosts": lambda: {f"sho.rt:{ours.port}"}, "resolver": resolve}
    )
    assert [row["title"] for row in rows] == [None, None, None, None, "someone else"]
    assert ours.requests == []
    assert sorted(other.paths()) == ["/", "/to-us"]  # the same address on another port is not us
    assert " ".join(fetcher_log).count("an address of this service itself") == 4
    assert lookups.count("sho.rt") == 1  # resolved once for all five fetches


def test_private_destination_refused_end_to_end(make_client, auth, conn, site, fetcher_log):
    site.page("/", "<title>internal</title>")
    client = make_client(fetcher_enabled=True)  # allow_private_addresses is off by default
    result = fetched_link(client, auth, conn, create(client, auth, site.url("/")))
    assert result["title"] is None
    assert site.requests == []
    assert "non-public address 127.0.0.1" in " ".join(fetcher_log)


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1::1", True),
        ("127.0.0.1", False),
        ("10.0.0.1", False),
        ("172.16.5.4", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("240.0.0.1", False),
        ("255.255.255.255", False),
        ("::1", False),
        ("::", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("fec0::1", False),
        ("ff02::1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:93.184.216.34", True),
        ("2002:7f00:1::1", False),
        ("64:ff9b::a00:1", False),
    ],
)
def test_address_classification(address, public):
    assert is_public_address(ipaddress.ip_address(address)) is public


async def test_https_is_verified_for_the_host_name_while_connecting_to_the_checked_address(site):
    # A real TLS server whose certificate names only "preview.test": the fetch connects
    # to the checked IP, yet sends that name (SNI) and verifies the certificate for it.
    authority = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("preview.test").configure_cert(server_context)
    site.server.socket = server_context.wrap_socket(site.server.socket, server_side=True)
    site.page("/", "<title>over https</title>")
    resolve = resolver_with({"preview.test": "127.0.0.1"})
    client_context = ssl.create_default_context()
    authority.configure_trust(client_context)
    async with httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=5, verify=client_context) as client:
        page = await fetch_html(
            client, f"https://preview.test:{site.port}/", policy=lambda *_: True, user_agent="t", resolve=resolve
        )
        assert b"over https" in page.body
    # A client that doesn't trust the site's certificate authority refuses it, as it must.
    other_context = ssl.create_default_context()
    trustme.CA().configure_trust(other_context)
    async with httpx.AsyncClient(
        follow_redirects=False, trust_env=False, timeout=5, verify=other_context
    ) as untrusting:
        with pytest.raises(FetchError, match=r"SSL|certificate|verify"):
            await fetch_html(
                untrusting,
                f"https://preview.test:{site.port}/",
                policy=lambda *_: True,
                user_agent="t",
                resolve=resolve,
            )


async def test_a_gzip_bomb_is_decompressed_only_up_to_the_size_limit(site):
    # 200 MiB of spaces gzip to ~200 KiB; only 1 MiB of it may ever be expanded.
    expanded = b"<html><head><title>bomb</title></head><body>" + b" " * (200 * 1024 * 1024)
    site.add("/", body=gzip.compress(expanded, compresslevel=9), headers={"Content-Encoding": "gzip"})
    tracemalloc.start()
    try:
        async with guarded_client() as client:
            page = await fetch_html(client, site.url("/"), policy=lambda *_: True, user_agent="t")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert page.body.startswith(b"<html><head><title>bomb</title>") and len(page.body) == MAX_BODY_BYTES
    assert peak < 16 * MAX_BODY_BYTES
    assert site.requests[0][1]["Accept-Encoding"] == "gzip, deflate"


async def test_an_encoding_we_did_not_ask_for_is_refused(site):
    site.page("/", "<title>x</title>", headers={"Content-Encoding": "br"})
    async with guarded_client() as client:
        with pytest.raises(FetchError, match="Content-Encoding"):
            await fetch_html(client, site.url("/"), policy=lambda *_: True, user_agent="t")


def test_a_connected_custom_domain_is_never_fetched(make_client, auth, conn, db_path, site, fetcher_log):
    # The account's own custom domain is this service too, on whatever port.
    run_cli("domain", "add", "--email", "owner@example.com", "127.0.0.1", "--db", str(db_path))
    site.page("/", "<title>ourselves</title>")
    client = make_client(fetcher_enabled=True, fetcher_allow_private_addresses=True)
    link = create(client, auth, site.url("/"))
    assert link["platform"] == "SHORTLINK"
    assert fetched_link(client, auth, conn, link)["title"] is None
    assert site.requests == []
    assert "this service itself" in " ".join(fetcher_log)


async def test_the_unspecified_addresses_are_the_service_itself_even_where_private_is_allowed(site):
    # Connecting to 0.0.0.0 or :: reaches this machine: with allow_private_addresses the
    # fetcher would otherwise fetch the service itself (or anything else listening here).
    site.page("/", "<title>ourselves</title>")
    own = OwnService(own_host_entries([f"sho.rt:{site.port}"]))
    resolve = resolver_with({"sho.rt": "127.0.0.1", "zero.test": "0.0.0.0"})
    async with guarded_client() as client:
        for url in (
            f"http://0.0.0.0:{site.port}/",
            f"http://0:{site.port}/",
            f"http://zero.test:{site.port}/",
            f"http://[::]:{site.port}/",
            f"http://[::ffff:0.0.0.0]:{site.port}/",
        ):
            with pytest.raises(FetchError, match="an address of this service itself") as refused:
                await fetch_html(client, url, policy=address_policy(True), user_agent="t", own=own, resolve=resolve)
            assert refused.value.permanent
    assert site.requests == []
