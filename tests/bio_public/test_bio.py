"""Bio pages: the rules, the application layer (the dashboard's editor calls it), and
GET /@<handle> through the real app: from memory, changed on every change, views and
click-through counted without bots."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta

import pytest
import zxingcpp
from litestar.testing import TestClient
from PIL import Image

from shortlink.accounts import service as accounts
from shortlink.application import bio as app_bio
from shortlink.bio import validation
from shortlink.bio.schema import SavePage
from shortlink.errors import ConflictError, NotFoundError, ValidationError
from shortlink.links.schema import CreateLink
from shortlink.pages.csp import csp_hash
from shortlink.pages.templated import STYLE
from shortlink.visits import enrich
from shortlink.web.asgi import create_app
from tests.conftest import SHORT_HOST, bearer
from tests.support.helpers import wait_for, wait_for_domain
from tests.support.visitors import DESKTOP, FACEBOOK_BOT, INSTAGRAM_IOS, IPHONE, make_link

pytestmark = pytest.mark.both_backends

# rules


@pytest.mark.parametrize("handle", ["abc", "alice_1-x", "a" * 30, "Alice"])
def test_handles_of_3_to_30_lower_case_letters_digits_underscore_and_hyphen(handle):
    assert validation.validate_handle(handle) == handle.lower()


@pytest.mark.parametrize("handle", ["ab", "a" * 31, "al ice", "alice!", "ålice", "@alice", ""])
def test_other_handles_are_refused_naming_the_field(handle):
    with pytest.raises(ValidationError, match=r"^handle: must be 3-30 characters"):
        validation.validate_handle(handle)


@pytest.mark.parametrize("handle", ["api", "API", "login", "dashboard", "healthz"])
def test_reserved_words_are_refused_as_for_short_codes(handle):
    with pytest.raises(ValidationError, match="reserved word"):
        validation.validate_handle(handle)


def test_texts_are_trimmed_bounded_and_free_of_control_characters():
    assert validation.validate_title("  My links ") == "My links"
    assert validation.validate_description("") == ""
    assert validation.validate_label("  ") is None
    for call, field in [
        (lambda: validation.validate_title(" "), "title"),
        (lambda: validation.validate_title("x" * 101), "title"),
        (lambda: validation.validate_description("x" * 301), "description"),
        (lambda: validation.validate_label("a\u202eb"), "label"),
    ]:
        with pytest.raises(ValidationError, match=f"^{field}: "):
            call()


def test_the_referrer_label_of_a_bio_page():
    assert validation.referrer_label("sho.rt", "/@alice") == "sho.rt/@alice"
    assert validation.referrer_label("sho.rt", "/@Alice/") == "sho.rt/@alice"
    assert validation.referrer_label("sho.rt", "/@alice/qr.svg") is None
    assert validation.referrer_label("sho.rt", "/l/abc") is None


def test_a_bio_page_on_a_domain_connected_later_is_labelled_as_one():
    ours = {"sho.rt"}
    referrer = "https://links.example.org/@alice"
    assert enrich.referrer_host(referrer, ours.__contains__) == "links.example.org"
    ours.add("links.example.org")  # the account connects its domain
    assert enrich.referrer_host(referrer, ours.__contains__) == "links.example.org/@alice"
    assert enrich.referrer_host("https://sho.rt/@bob/", ours.__contains__) == "sho.rt/@bob"
    assert enrich.referrer_host("http://[::1", ours.__contains__) == enrich.DIRECT  # not a URL


# the application layer


@pytest.fixture
def owner(conn, api_key):
    return accounts.account_for(conn, "owner@example.com")["id"]


def call(client, function, *args, **kwargs):
    """Run an application-layer coroutine on the app's own event loop."""
    return client.blocking_portal.call(lambda: function(*args, **kwargs))


def publish(client, owner, handle="alice", **fields):
    body = SavePage(handle=handle, title=fields.pop("title", "Alice's links"), is_published=True, **fields)
    return call(client, client.app.state.services.bio.save, owner, body)


def page_of(client, handle="alice", ua=IPHONE, method="GET", **headers):
    return client.request(method, f"/@{handle}", headers={"User-Agent": ua, **headers}, follow_redirects=False)


def labels(response) -> list[str]:
    return re.findall(r'<a class="button" href="[^"]*">([^<]*)</a>', response.text)


def test_the_editor_builds_a_page_of_the_accounts_links(client, auth, owner):
    bio = client.app.state.services.bio
    first = make_link(client, auth, customCode="first", title="First")
    second = make_link(client, auth, customCode="second", title="Second")
    page = publish(client, owner, description="Everything I make")
    assert (page.handle, page.url, page.buttons) == ("alice", f"{SHORT_HOST}/@alice", [])
    call(client, bio.add_button, owner, first["id"])
    page = call(client, bio.add_button, owner, second["id"], "My second")
    assert [(b.short_code, b.label, b.short_url) for b in page.buttons] == [
        ("first", "First", f"{SHORT_HOST}/l/first"),
        ("second", "My second", f"{SHORT_HOST}/l/second"),
    ]
    page = call(client, bio.reorder, owner, [second["id"], first["id"]])
    assert [b.short_code for b in page.buttons] == ["second", "first"]
    page = call(client, bio.update_button, owner, first["id"], is_hidden=True)
    assert [(b.short_code, b.is_hidden, b.is_shown) for b in page.buttons] == [
        ("second", False, True),
        ("first", True, False),
    ]
    page = call(client, bio.remove_button, owner, second["id"])
    assert [b.short_code for b in page.buttons] == ["first"]
    assert client.get(f"/api/v1/links/{second['id']}", headers=auth).status_code == 200  # the link stays


def test_a_link_created_from_the_editor_has_source_bio(client, auth, owner):
    bio = client.app.state.services.bio
    publish(client, owner)
    page, link = call(client, bio.create_button, owner, CreateLink(original_url="https://example.com/new"))
    assert [b.link_id for b in page.buttons] == [link.id]
    data = client.get(f"/api/v1/links/{link.id}", headers=auth).json()["data"]
    assert (data["source"], data["originalUrl"]) == ("BIO", "https://example.com/new")


def test_editor_errors_are_the_apis_errors(client, auth, owner, new_key):
    bio = client.app.state.services.bio
    link = make_link(client, auth)
    with pytest.raises(NotFoundError):
        call(client, bio.add_button, owner, link["id"])  # no page yet
    publish(client, owner)
    other_key = new_key("other@example.com")
    other_link = make_link(client, bearer(other_key))
    with pytest.raises(NotFoundError, match="No link with id"):
        call(client, bio.add_button, owner, other_link["id"])  # another account's link
    call(client, bio.add_button, owner, link["id"])
    with pytest.raises(ValidationError, match=r"^linkId: .* already on the page"):
        call(client, bio.add_button, owner, link["id"])
    with pytest.raises(ValidationError, match=r"^order: "):
        call(client, bio.reorder, owner, [link["id"], link["id"]])
    with pytest.raises(ValidationError, match=r"^label: "):
        call(client, bio.update_button, owner, link["id"], label="x" * 81)
    with pytest.raises(ValidationError, match=r"^handle: 'api' is a reserved word"):
        publish(client, owner, handle="api")
    with pytest.raises(ValidationError, match=r"^days: "):
        call(client, bio.stats, owner, 0)


def test_handles_are_unique(client, conn, owner, new_key):
    publish(client, owner, handle="taken")
    new_key("other@example.com")
    other = accounts.account_for(conn, "other@example.com")["id"]
    with pytest.raises(ConflictError, match="handle 'taken' is already taken"):
        publish(client, other, handle="Taken")


def test_a_full_page_refuses_a_new_link_before_making_it(client, auth, owner, monkeypatch):
    bio = client.app.state.services.bio
    monkeypatch.setattr(validation, "MAX_BUTTONS", 1)
    publish(client, owner)
    call(client, bio.create_button, owner, CreateLink(original_url="https://example.com/1"))
    with pytest.raises(ValidationError, match="at most 1 buttons"):
        call(client, bio.create_button, owner, CreateLink(original_url="https://example.com/2"))
    assert client.get("/api/v1/links", headers=auth).json()["pagination"]["total"] == 1


# the public page


def test_the_public_page_lists_the_shown_buttons_in_order(client, auth, owner):
    bio = client.app.state.services.bio
    codes = ["one", "two", "paused", "hidden"]
    links = {code: make_link(client, auth, customCode=code, title=f"Title {code}") for code in codes}
    publish(client, owner, title="Alice <3", description="Links & more")
    for code in codes:
        call(client, bio.add_button, owner, links[code]["id"])
    call(client, bio.update_button, owner, links["hidden"]["id"], is_hidden=True)
    client.patch(f"/api/v1/links/{links['paused']['id']}", headers=auth, json={"isActive": False})
    response = page_of(client)
    assert response.status_code == 200
    assert labels(response) == ["Title one", "Title two"]
    assert f'href="{SHORT_HOST}/l/one"' in response.text
    html = response.text
    assert "<h1>Alice &lt;3</h1>" in html and "Links &amp; more" in html
    for tag, value in [
        ("og:title", "Alice &lt;3"),
        ("og:description", "Links &amp; more"),
        ("og:url", f"{SHORT_HOST}/@alice"),
        ("og:type", "website"),
    ]:
        assert f'<meta property="{tag}" content="{value}">' in html
    headers = response.headers
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert f"style-src {csp_hash(STYLE)}" in headers["content-security-policy"]
    assert "default-src 'none'" in headers["content-security-policy"]
    assert f"<style>{STYLE}</style>" in html  # exactly the hashed style
    assert headers["referrer-policy"] == "no-referrer-when-downgrade"
    head = page_of(client, method="HEAD")
    assert (head.status_code, head.content) == (200, b"")
    assert head.headers["content-length"] == headers["content-length"]


def test_every_change_shows_at_once(client, auth, owner):
    bio = client.app.state.services.bio
    link = make_link(client, auth, customCode="first", title="Before")
    publish(client, owner)
    call(client, bio.add_button, owner, link["id"])
    assert labels(page_of(client)) == ["Before"]
    client.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"title": "After"})
    assert labels(page_of(client)) == ["After"]  # a link change
    call(client, bio.update_button, owner, link["id"], label="Mine")
    assert labels(page_of(client)) == ["Mine"]  # a button change
    publish(client, owner, title="New title")
    assert "<h1>New title</h1>" in page_of(client).text  # a page change
    publish(client, owner, handle="alice2")
    assert page_of(client).status_code == 404  # renamed: the old handle is gone
    assert labels(page_of(client, "alice2")) == ["Mine"]
    client.delete(f"/api/v1/links/{link['id']}", headers=auth)
    assert labels(page_of(client, "alice2")) == []  # the link deleted: its button too
    call(client, bio.save, owner, SavePage(handle="alice2", title="Hidden", is_published=False))
    assert page_of(client, "alice2").status_code == 404


def test_an_expiring_link_leaves_the_page_when_it_expires(client, auth, owner):
    bio = client.app.state.services.bio
    expires = datetime.now(UTC) + timedelta(seconds=2)
    link = make_link(client, auth, title="Soon gone", expiresAt=expires.isoformat())
    publish(client, owner)
    call(client, bio.add_button, owner, link["id"])
    assert labels(page_of(client)) == ["Soon gone"]
    wait_for(lambda: labels(page_of(client)) == [], timeout=15, what="the expired link to leave the page")


def test_a_change_by_another_process_reaches_the_page(client, conn, owner):
    publish(client, owner, title="Before")
    assert "<h1>Before</h1>" in page_of(client).text
    conn.execute("UPDATE bio_pages SET title = 'From elsewhere'")  # as another process would
    wait_for(lambda: "<h1>From elsewhere</h1>" in page_of(client).text, what="the outside change")


def test_unknown_and_unpublished_handles_get_the_visitor_404_page(client, owner):
    call(client, client.app.state.services.bio.save, owner, SavePage(handle="draft", title="Draft"))
    for handle in ["nobody", "draft", "a", "al%20ice"]:
        response = page_of(client, handle)
        assert response.status_code == 404, handle
        assert "Link not found" in response.text and response.headers["content-type"].startswith("text/html")


def test_other_top_level_paths_are_unknown_routes_as_before(client):
    for method, path in [("GET", "/alice"), ("POST", "/whatever"), ("GET", "/api/v2"), ("DELETE", "/x/y")]:
        response = client.request(method, path)
        assert response.status_code == 404, path
        assert response.json()["error"]["code"] == "NOT_FOUND"
    response = client.post("/@alice")
    assert (response.status_code, response.headers["allow"]) == (405, "GET, HEAD")


def test_a_custom_domain_shows_only_its_own_accounts_page(client, conn, owner, new_key):
    publish(client, owner)
    new_key("brand@example.com")
    accounts.add_domain(conn, "brand@example.com", "links.brand.example")
    wait_for_domain(client, "links.brand.example")
    assert page_of(client, Host="links.brand.example").status_code == 404
    assert page_of(client, Host="sho.rt").status_code == 200


def test_the_qr_code_of_the_page_reads_as_its_address(client, owner):
    publish(client, owner)
    response = client.get("/@alice/qr.png")
    assert (response.status_code, response.headers["content-type"]) == (200, "image/png")
    [found] = zxingcpp.read_barcodes(Image.open(io.BytesIO(response.content)))
    assert found.text == f"{SHORT_HOST}/@alice"
    svg = client.get("/@alice/qr.svg")
    assert svg.headers["content-type"].startswith("image/svg+xml") and b"<svg" in svg.content
    again = client.get("/@alice/qr.svg", headers={"If-None-Match": svg.headers["etag"]})
    assert (again.status_code, again.content) == (304, b"")
    assert client.get("/@nobody/qr.svg").status_code == 404
    assert client.get("/@alice/other.svg").status_code == 404


def flush(client):
    services = client.app.state.services
    call(client, services.recorder.flush)
    call(client, services.bio.flush_views)


def test_views_are_counted_per_day_without_bots_and_head(client, auth, owner):
    bio = client.app.state.services.bio
    publish(client, owner)
    for ua in [IPHONE, INSTAGRAM_IOS, DESKTOP, FACEBOOK_BOT, ""]:
        page_of(client, ua=ua)
    page_of(client, method="HEAD")
    flush(client)
    stats = call(client, bio.stats, owner, 7)
    assert len(stats.views_by_day) == 7
    assert stats.views_by_day[-1].day == datetime.now(UTC).date().isoformat()
    assert (stats.views_by_day[-1].views, stats.total_views) == (3, 3)
    assert sum(day.views for day in stats.views_by_day[:-1]) == 0


def test_clicks_through_the_page_are_told_apart_by_their_referrer(client, auth, owner):
    bio = client.app.state.services.bio
    one, two = make_link(client, auth, customCode="one"), make_link(client, auth, customCode="two")
    publish(client, owner)
    call(client, bio.add_button, owner, one["id"])
    call(client, bio.add_button, owner, two["id"])
    came_from_page = {"Referer": f"{SHORT_HOST}/@alice", "User-Agent": IPHONE}
    for code, headers in [
        ("one", came_from_page),
        ("one", came_from_page),
        ("two", came_from_page),
        ("two", {"User-Agent": IPHONE, "Referer": "https://www.instagram.com/"}),
        ("two", {"User-Agent": IPHONE, "Referer": "https://www.tiktok.com/@alice"}),  # not ours
        ("one", {"User-Agent": FACEBOOK_BOT, "Referer": f"{SHORT_HOST}/@alice"}),  # a bot
    ]:
        assert client.get(f"/l/{code}", headers=headers, follow_redirects=False).status_code in (200, 302)
    flush(client)
    stats = call(client, bio.stats, owner)
    assert [(b.short_code, b.clicks) for b in stats.buttons] == [("one", 2), ("two", 1)]
    referrers = client.get(f"/api/v1/links/{two['id']}/analytics", headers=auth).json()["data"]["referrerBreakdown"]
    assert {item["referrer"]: item["clicks"] for item in referrers} == {
        "sho.rt/@alice": 1,
        "www.instagram.com": 1,
        "www.tiktok.com": 1,
    }


@pytest.mark.sqlite_only
def test_a_cached_page_costs_no_database_read(client, owner):
    services = client.app.state.services
    publish(client, owner)
    assert page_of(client).status_code == 200  # rendered and cached
    # Every statement the page path can run goes through the point reader's connection:
    # trace it (SQLite's own hook, on the real connection) instead of replacing our code.
    statements: list[str] = []
    services.db.read_now(lambda conn: conn.set_trace_callback(statements.append))
    assert page_of(client).status_code == 200
    assert statements == []
    services.caches.bio.clear()  # the control: an uncached page is read, and the trace sees it
    assert page_of(client).status_code == 200
    assert any("bio_pages" in statement for statement in statements)


def test_with_redis_every_process_forgets_a_changed_page(redis_server, make_client, auth, owner):
    """With Redis a process keeps its pages across other processes' commits, so changes
    must arrive on the channel: a page's own ("@" + handle) and its links' (their codes)."""
    first, second = make_client(redis_url=redis_server.url), make_client(redis_url=redis_server.url)
    link = make_link(first, auth, customCode="shared", title="Before")
    publish(first, owner)
    call(first, first.app.state.services.bio.add_button, owner, link["id"])
    wait_for(lambda: labels(page_of(second)) == ["Before"], what="the other process to show the page")
    first.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"title": "After"})
    wait_for(lambda: labels(page_of(second)) == ["After"], what="a link change to reach the other process")
    publish(first, owner, title="Renamed")
    wait_for(lambda: "<h1>Renamed</h1>" in page_of(second).text, what="a page change to reach the other process")


@pytest.mark.parametrize(
    "path",
    ["/@%00", "/@" + "a" * 5000, "/@%C3%A4lice", "/@alice%2Fqr.svg", "/@@alice", "/@alice/qr.svg/x", "/@%FF"],
)
@pytest.mark.parametrize("host", ["sho.rt", "[::1", "[go.example]", "", "SHO.RT."])
def test_odd_paths_and_hosts_never_fail(client, owner, path, host):
    publish(client, owner)
    response = client.get(path, headers={"Host": host, "User-Agent": "\x7f" + IPHONE})
    assert response.status_code in (200, 400, 404), response.text


def test_head_of_the_qr_code_has_no_body(client, owner):
    publish(client, owner)
    get, head = client.get("/@alice/qr.svg"), client.head("/@alice/qr.svg")
    assert (head.status_code, head.content) == (200, b"")
    assert head.headers["etag"] == get.headers["etag"]


def test_views_counted_before_a_shutdown_are_written_by_it(config, conn, owner, monkeypatch):
    monkeypatch.setattr(app_bio, "VIEWS_FLUSH_SECONDS", 3600)  # only the shutdown writes them
    with TestClient(app=create_app(config)) as client:
        publish(client, owner)
        for ua in (IPHONE, INSTAGRAM_IOS, DESKTOP, IPHONE.replace("Mobile/15E148", "Mobile/15E149")):
            page_of(client, ua=ua)  # four visitors: one view each
    assert conn.execute("SELECT sum(views) FROM bio_page_days").fetchone()[0] == 4
