"""The link list and a link's page through the real app (TestClient): tags set from the new-link
form and shown in the list and on the link's page, the list's sorting by created, clicks and
code (kept across pages and filters), platforms by their names, and the service's icon."""

from __future__ import annotations

import re

import pytest
from litestar.testing import TestClient

from shortlink.links.platforms import PLATFORM_NAMES, Platform
from shortlink.links.schema import LINK_SORTS
from shortlink.storage import links as link_store
from tests.conftest import bearer
from tests.support.dashboard import as_browser, create_link, field_error, post, signed_in

pytestmark = pytest.mark.both_backends


@pytest.fixture
def make_client(make_client):
    """The app as a browser on the https short host sees it (the cookies are Secure there)."""

    def make(**overrides) -> TestClient:
        return as_browser(make_client(**overrides), "links_short_host" in overrides)

    return make


def codes_in_order(html: str) -> list[str]:
    """The short codes of the list's rows, top to bottom."""
    return re.findall(r'<a href="/links/lnk_\w+">https://sho\.rt/l/([\w-]+)</a>', html)


def tags_of_row(html: str, code: str) -> list[str]:
    row = re.search(rf"/l/{code}</a>.*?</tr>", html, re.S)
    assert row, f"a row for {code}"
    return re.findall(r'<a class="tag" href="[^"]*">([^<]*)</a>', row.group(0))


def test_tags_typed_in_the_new_link_form_show_in_the_list_and_on_the_links_page(make_client, conn, new_key):
    client = signed_in(make_client, conn)
    link_id = create_link(
        client, originalUrl="https://example.com/sale", customCode="sale", tags=" spring sale , newsletter,, "
    )
    page = client.get(f"/links/{link_id}").text
    assert re.findall(r'<a class="tag" href="/links\?tag=([^"]*)">([^<]*)</a>', page) == [
        ("newsletter", "newsletter"),
        ("spring+sale", "spring sale"),
    ]
    listing = client.get("/links").text
    assert tags_of_row(listing, "sale") == ["newsletter", "spring sale"]
    # The API's tags resource holds them, with the account's default colour.
    key = new_key("owner@example.com")
    tags = client.get(f"/api/v1/links/{link_id}/tags", headers=bearer(key)).json()["data"]["tags"]
    assert [tag["name"] for tag in tags] == ["newsletter", "spring sale"]
    # A link without tags says so on its page and shows none in the list.
    plain_id = create_link(client, originalUrl="https://example.com/plain", customCode="plain")
    assert "<dt>Tags</dt><dd>none</dd>" in client.get(f"/links/{plain_id}").text
    assert tags_of_row(client.get("/links").text, "plain") == []
    # A tag in the list is a link to the list of its links, keeping the list's order.
    tagged = client.get("/links?sort=code").text
    assert 'href="/links?tag=newsletter&amp;sort=code"' in tagged
    assert codes_in_order(client.get("/links?tag=newsletter&sort=code").text) == ["sale"]


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("fine, a;b", "tags: a tag name must not contain ; or ,"),
        ("twice, twice", "tags: tag 'twice' is given twice"),
        (", ".join(f"t{number}" for number in range(21)), "tags: at most 20 tags per link"),
        ("x" * 41, "tags: a tag name must be 1-40 characters"),
    ],
)
def test_refused_tags_are_told_beside_the_field_and_make_no_link(make_client, conn, typed, message):
    client = signed_in(make_client, conn)
    refused = post(client, "/links", {"originalUrl": "https://example.com/t", "customCode": "tagged", "tags": typed})
    assert refused.status_code == 400
    assert field_error(refused.text, "tags") == message
    assert 'aria-describedby="h-tags e-tags"' in refused.text
    assert 'value="https://example.com/t"' in refused.text and 'value="tagged"' in refused.text  # kept
    assert "0 links" in client.get("/links").text


def test_a_link_is_made_with_its_tags_or_not_at_all(make_client, conn):
    """A tag refused only when stored (none is: every rule is checked first) would leave a link
    without its tags; the link and its tags are one transaction, so a refused form makes none,
    even when the link's own fields are fine and its code is free."""
    client = signed_in(make_client, conn)
    refused = post(client, "/links", {"originalUrl": "https://example.com/t", "customCode": "once", "tags": "a#00ff00"})
    assert refused.status_code == 400 and field_error(refused.text, "tags").startswith("tags: a tag name must not end")
    assert create_link(client, originalUrl="https://example.com/t", customCode="once", tags="ok")  # the code is free


def test_the_links_page_changes_its_tags(make_client, conn):
    client = signed_in(make_client, conn)
    link_id = create_link(client, originalUrl="https://example.com/e", customCode="edit", tags="one, two")
    page = client.get(f"/links/{link_id}").text
    assert 'id="f-tags" name="tags" type="text" value="one, two"' in page
    assert post(client, f"/links/{link_id}", {"tags": "two, three"}).headers["location"] == f"/links/{link_id}?saved=1"
    assert tags_of_row(client.get("/links").text, "edit") == ["three", "two"]
    # A refusal is told beside the field with what was typed, and saves nothing else either.
    refused = post(client, f"/links/{link_id}", {"title": "New title", "tags": "ok, not;ok"})
    assert refused.status_code == 400
    assert field_error(refused.text, "tags") == "tags: a tag name must not contain ; or ,"
    assert 'value="ok, not;ok"' in refused.text
    assert "New title" not in client.get(f"/links/{link_id}").text
    # A form without the field (an older page) leaves the tags; an empty field removes them.
    assert post(client, f"/links/{link_id}", {"title": "Kept tags"}).status_code == 303
    assert tags_of_row(client.get("/links").text, "edit") == ["three", "two"]
    assert post(client, f"/links/{link_id}", {"tags": ""}).status_code == 303
    assert "<dt>Tags</dt><dd>none</dd>" in client.get(f"/links/{link_id}").text


def set_link(conn, code: str, *, created: str, clicks: int) -> None:
    conn.execute("UPDATE links SET created_at = ?, click_count = ? WHERE short_code = ?", (created, clicks, code))
    if hasattr(conn, "commit"):
        conn.commit()


def test_the_list_sorts_by_created_clicks_and_code_and_says_which(make_client, conn):
    client = signed_in(make_client, conn)
    for code, created, clicks in (
        ("b-mid", "2026-01-02T00:00:00.000Z", 30),
        ("c-old", "2026-01-01T00:00:00.000Z", 5),
        ("a-new", "2026-01-03T00:00:00.000Z", 10),
    ):
        create_link(client, originalUrl=f"https://example.com/{code}", customCode=code)
        set_link(conn, code, created=created, clicks=clicks)
    newest = client.get("/links").text
    assert codes_in_order(newest) == ["a-new", "b-mid", "c-old"]
    assert '<th scope="col" aria-sort="descending"><a class="sort" href="/links?sort=created">Created' in newest
    assert newest.count("aria-sort=") == 1
    assert '<time datetime="2026-01-03T00:00:00.000Z">2026-01-03</time>' in newest
    assert '<option value="-created" selected>Newest first</option>' in newest
    expected = {
        "created": ["c-old", "b-mid", "a-new"],
        "-clicks": ["b-mid", "a-new", "c-old"],
        "clicks": ["c-old", "a-new", "b-mid"],
        "code": ["a-new", "b-mid", "c-old"],
        "-code": ["c-old", "b-mid", "a-new"],
    }
    assert set(expected) | {"-created"} == set(LINK_SORTS)
    for sort, codes in expected.items():
        page = client.get(f"/links?sort={sort}").text
        assert codes_in_order(page) == codes, sort
        direction = "descending" if sort.startswith("-") else "ascending"
        assert re.search(rf'<th scope="col"( class="num")? aria-sort="{direction}"><a class="sort"', page), sort
        assert f'<option value="{sort}" selected>' in page
    # A heading links to its other direction when the list is in its order, else to its first.
    by_clicks = client.get("/links?sort=-clicks").text
    assert 'aria-sort="descending"><a class="sort" href="/links?sort=clicks">Clicks' in by_clicks
    assert '<a class="sort" href="/links?sort=code">Short URL</a>' in by_clicks
    assert '<a class="sort" href="/links">Created</a>' in by_clicks  # newest first: the default


def test_the_order_and_the_filters_are_kept_across_pages_and_headings(make_client, conn, auth):
    client = signed_in(make_client, conn)
    items = [{"originalUrl": f"https://example.com/{n}", "customCode": f"code-{n:02}"} for n in range(25)]
    assert client.post("/api/v1/links/bulk", json={"links": items}, headers=auth).status_code in (200, 207)
    first = client.get("/links?sort=-code&search=code&state=active").text
    assert codes_in_order(first)[:2] == ["code-24", "code-23"]
    next_href = re.search(r'<a href="([^"]*)" rel="next">', first).group(1).replace("&amp;", "&")
    assert next_href == "/links?search=code&state=active&sort=-code&page=2"
    second = client.get(next_href).text
    assert codes_in_order(second) == ["code-04", "code-03", "code-02", "code-01", "code-00"]
    assert '<a href="/links?search=code&amp;state=active&amp;sort=-code" rel="prev">' in second
    # A heading keeps the filters and starts again at the first page.
    assert 'href="/links?search=code&amp;state=active&amp;sort=-clicks">Clicks</a>' in second
    assert 'id="f-search" name="search" type="search" value="code"' in second


def test_an_unknown_order_is_told_beside_its_field_and_the_newest_are_shown(make_client, conn):
    client = signed_in(make_client, conn)
    create_link(client, originalUrl="https://example.com/a", customCode="first")
    for sort in ("created_at; DROP TABLE links", "-", "CLICKS", "x" * 5000):
        page = client.get("/links", params={"sort": sort})
        assert page.status_code == 200, sort
        assert field_error(page.text, "sort") == "sort: not an order this list knows; newest first is shown"
        assert codes_in_order(page.text) == ["first"]


def test_storage_orders_only_by_the_names_it_knows(conn):
    with pytest.raises(ValueError, match="no list order"):
        link_store.list_links(
            conn, 1, offset=0, limit=1, search=None, short_code=None, platform=None, is_active=None, order="id"
        )


def test_platforms_show_by_their_names(make_client, conn):
    client = signed_in(make_client, conn)
    youtube = create_link(client, originalUrl="https://www.youtube.com/watch?v=dQw4w9WgXcQ", customCode="tube")
    create_link(client, originalUrl="https://apps.apple.com/app/id284882215", customCode="store")
    listing = client.get("/links").text
    rows = listing.split("<tbody>")[1]
    assert '<span class="label">Platform: </span>YouTube</td>' in rows
    assert '<span class="label">Platform: </span>App Store</td>' in rows
    assert "YOUTUBE" not in rows and "APPSTORE" not in rows
    assert '<option value="PLAYSTORE">Google Play</option>' in listing  # the filter's choices too
    chosen = client.get("/links?platform=APPSTORE").text
    assert '<option value="APPSTORE" selected>App Store</option>' in chosen
    assert codes_in_order(chosen) == ["store"]
    assert "<dt>Platform</dt><dd>YouTube</dd>" in client.get(f"/links/{youtube}").text
    assert set(PLATFORM_NAMES) == set(Platform)  # a new platform needs its name


def test_the_icon_is_served_cacheable_and_every_page_links_it(make_client, conn):
    client = signed_in(make_client, conn)
    ico = client.get("/favicon.ico")
    assert ico.status_code == 200 and ico.headers["content-type"] == "image/x-icon"
    assert ico.content[:4] == b"\x00\x00\x01\x00"  # an ICO file's header
    svg = client.get("/favicon.svg")
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert svg.text.startswith("<svg")
    for icon in (ico, svg):
        assert icon.headers["cache-control"] == "public, max-age=604800"
        assert icon.headers["x-content-type-options"] == "nosniff"
        assert icon.headers["content-security-policy"] == "default-src 'none'"
    for path in ("/links", "/login", "/keys"):
        page = client.get(path)
        assert '<link rel="icon" href="/favicon.svg" type="image/svg+xml">' in page.text
        assert "img-src 'self'" in page.headers["content-security-policy"]  # the icon is our own
    # Signed out too, and no short code or bio handle can take the icon's addresses.
    assert client.get("/logout").status_code in (200, 303, 405)
    assert make_client().get("/favicon.ico").content == ico.content
    refused = post(client, "/links", {"originalUrl": "https://example.com", "customCode": "favicon.ico"})
    assert refused.status_code == 400 and field_error(refused.text, "customCode").startswith("customCode: ")
