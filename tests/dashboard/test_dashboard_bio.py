"""The dashboard's bio editor through the real app (TestClient): the page form with the
application layer's errors beside its fields, every button action, the QR code, the
statistics, CSRF, and one account never reaching another's page or buttons.

The browser end to end is tests/test_dashboard_bio_browser.py.
"""

from __future__ import annotations

import io
import re

import pytest
import zxingcpp
from litestar.testing import TestClient
from PIL import Image

from shortlink.accounts import service as accounts
from shortlink.bio import validation
from shortlink.errors import NotFoundError
from tests.conftest import SHORT_HOST, bearer
from tests.support.dashboard import as_browser, create_link, field_error, post, signed_in
from tests.support.visitors import FACEBOOK_BOT, IPHONE

pytestmark = pytest.mark.both_backends

OWNER, INTRUDER = "owner@example.com", "intruder@example.com"


@pytest.fixture
def make_client(make_client):
    def make(**overrides) -> TestClient:
        return as_browser(make_client(**overrides), "links_short_host" in overrides)

    return make


@pytest.fixture
def owner(make_client, conn) -> TestClient:
    return signed_in(make_client, conn, OWNER)


def save_page(client: TestClient, handle: str = "alice", published: bool = True, **fields: str):
    data = {"handle": handle, "title": "Alice's links", **fields}
    if published:
        data["isPublished"] = "1"
    return post(client, "/bio", data)


def buttons_of(client: TestClient, conn, email: str = OWNER) -> list[tuple[str, bool]]:
    """(label, hidden) of the page's buttons in order, as the application layer has them."""
    account_id = accounts.account_for(conn, email)["id"]
    page = client.blocking_portal.call(client.app.state.services.bio.page, account_id)
    return [(button.label, button.is_hidden) for button in page.buttons]


def done(response, client: TestClient, what: str) -> str:
    """The page a state-changing POST redirected to (303, back to /bio with its message)."""
    assert response.status_code == 303, response.text
    assert response.headers["location"] == f"/bio?done={what}"
    page = client.get(response.headers["location"])
    assert page.status_code == 200
    return page.text


def button_ids(html: str) -> list[str]:
    return re.findall(r'action="/bio/buttons/(lnk_[^/"]+)/hidden"', html)


# The page


def test_the_navigation_leads_to_the_editor_and_signed_out_visitors_to_sign_in(client, owner):
    assert '<a href="/bio">Bio page</a>' in owner.get("/links").text
    editor = owner.get("/bio")
    assert 'aria-current="page">Bio page</a>' in editor.text
    assert "Create your page" in editor.text and "Add one of your links" not in editor.text
    for path in ("/bio", "/bio/stats", "/bio/qr", "/bio/buttons/new", "/bio/delete"):
        assert client.get(path, follow_redirects=False).headers["location"] == "/login", path


def test_a_page_is_created_published_and_edited_from_the_form(owner):
    text = done(save_page(owner, "Alice", description="Videos and more"), owner, "saved")
    assert "The page was saved." in text
    assert f'<a href="{SHORT_HOST}/@alice">{SHORT_HOST}/@alice</a>' in text
    assert 'value="alice"' in text and 'value="Videos and more"' in text and "checked" in text
    assert '<img class="qr-preview" src="/bio/qr?format=svg"' in text
    assert "Videos and more" in owner.get("/@alice", headers={"User-Agent": IPHONE}).text
    # Unticking "Published" takes the page off the web; the editor says so.
    text = done(save_page(owner, "alice", published=False, title="Renamed"), owner, "saved")
    assert "not published" in text and 'value="Renamed"' in text
    assert owner.get("/@alice", headers={"User-Agent": IPHONE}).status_code == 404


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"handle": "admin"}, "handle", "handle: 'admin' is a reserved word"),
        ({"handle": "a b"}, "handle", "handle: must be 3-30 characters of a-z, 0-9, _ and -"),
        ({"title": "  "}, "title", "title: must not be blank"),
        ({"description": "x" * 301}, "description", "description: must be at most 300 characters"),
    ],
)
def test_refused_fields_get_the_application_layers_message_beside_them(owner, fields, field, message):
    response = save_page(owner, **{"handle": "alice", **fields})
    assert response.status_code == 400
    assert field_error(response.text, field) == message
    assert f'id="f-{field}"' in response.text and 'aria-invalid="true"' in response.text
    assert owner.get("/@alice").status_code == 404  # nothing was saved


def test_a_taken_handle_is_a_conflict_said_beside_the_handle(make_client, conn, owner):
    assert save_page(owner, "alice").status_code == 303
    other = signed_in(make_client, conn, INTRUDER)
    response = save_page(other, "Alice", title="Not Alice")
    assert response.status_code == 400
    assert field_error(response.text, "handle") == "handle 'alice' is already taken"
    assert 'value="Not Alice"' in response.text  # what was typed is kept
    assert "Alice&#39;s links" in owner.get("/@alice", headers={"User-Agent": IPHONE}).text


def test_the_page_is_deleted_after_a_confirmation_and_its_links_stay(owner):
    save_page(owner)
    link_id = create_link(owner, originalUrl="https://example.com/keep")
    post(owner, "/bio/buttons", {"linkId": link_id})
    confirm = owner.get("/bio/delete")
    assert "Delete the page /@alice?" in confirm.text and 'action="/bio/delete"' in confirm.text
    text = done(post(owner, "/bio/delete"), owner, "deleted")
    assert "Create your page" in text
    assert owner.get("/@alice").status_code == 404
    assert owner.get(f"/links/{link_id}").status_code == 200


def test_the_qr_code_downloads_as_svg_and_png_and_reads_as_the_pages_address(owner):
    save_page(owner, published=False)  # before it is published too, to print it in advance
    png = owner.get("/bio/qr?format=png&download=1")
    assert png.headers["content-type"] == "image/png"
    assert png.headers["content-disposition"] == 'attachment; filename="alice.png"'
    assert [found.text for found in zxingcpp.read_barcodes(Image.open(io.BytesIO(png.content)))] == [
        f"{SHORT_HOST}/@alice"
    ]
    svg = owner.get("/bio/qr?format=svg")
    assert svg.headers["content-type"].startswith("image/svg+xml") and svg.content.startswith(b"<svg")
    assert "content-disposition" not in svg.headers
    assert owner.get("/bio/qr?format=gif").status_code == 400


# Buttons


def test_buttons_are_added_created_hidden_shown_moved_and_removed(owner, conn):
    save_page(owner)
    existing = create_link(owner, originalUrl="https://example.com/shop", title="The shop")
    editor = owner.get("/bio").text
    assert f'<option value="{existing}">' in editor

    text = done(post(owner, "/bio/buttons", {"linkId": existing, "label": "Shop"}), owner, "added")
    assert "The button was added at the end." in text and f'<option value="{existing}">' not in text
    new = owner.get("/bio/buttons/new")
    assert new.status_code == 200 and 'action="/bio/buttons/new"' in new.text
    text = done(
        post(owner, "/bio/buttons/new", {"originalUrl": "https://www.youtube.com/watch?v=x", "label": "Video"}),
        owner,
        "created",
    )
    assert buttons_of(owner, conn) == [("Shop", False), ("Video", False)]
    shop, video = button_ids(text)

    assert "hidden" in done(post(owner, f"/bio/buttons/{shop}/hidden", {"hidden": "true"}), owner, "hidden")
    assert buttons_of(owner, conn) == [("Shop", True), ("Video", False)]
    assert re.findall(r'class="button" href="[^"]*">([^<]*)<', owner.get("/@alice").text) == ["Video"]
    done(post(owner, f"/bio/buttons/{shop}/hidden", {"hidden": "false"}), owner, "shown")

    text = done(post(owner, f"/bio/buttons/{video}/move", {"direction": "up"}), owner, "moved")
    assert button_ids(text) == [video, shop]
    done(post(owner, f"/bio/buttons/{video}/move", {"direction": "down"}), owner, "moved")
    assert buttons_of(owner, conn) == [("Shop", False), ("Video", False)]
    # The first button has no "Move up", the last no "Move down".
    assert text.count(">Move up<") == 1 and text.count(">Move down<") == 1

    form = owner.get(f"/bio/buttons/{shop}/label")
    assert 'value="Shop"' in form.text and "Text of “Shop”" in form.text
    done(post(owner, f"/bio/buttons/{shop}/label", {"label": "The shop, new"}), owner, "labelled")
    assert buttons_of(owner, conn)[0] == ("The shop, new", False)
    done(post(owner, f"/bio/buttons/{shop}/label", {"label": ""}), owner, "labelled")  # the link's title again
    assert buttons_of(owner, conn) == [("The shop", False), ("Video", False)]
    refused = post(owner, f"/bio/buttons/{shop}/label", {"label": "x" * 81})
    assert refused.status_code == 400
    assert field_error(refused.text, "label") == "label: must be at most 80 characters"

    confirm = owner.get(f"/bio/buttons/{video}/remove")
    assert "Remove “Video”?" in confirm.text and "stays in your account" in confirm.text
    text = done(post(owner, f"/bio/buttons/{video}/remove"), owner, "removed")
    assert buttons_of(owner, conn) == [("The shop", False)]
    assert owner.get(f"/links/{video}").status_code == 200  # the link stays


def test_a_link_created_as_a_button_has_source_bio(owner, conn):
    save_page(owner)
    post(owner, "/bio/buttons/new", {"originalUrl": "https://example.com/new"})
    link_id = button_ids(owner.get("/bio").text)[0]
    key = accounts.create_key(conn, OWNER).key
    assert owner.get(f"/api/v1/links/{link_id}", headers=bearer(key)).json()["data"]["source"] == "BIO"


def test_button_errors_are_said_beside_their_fields(owner, conn):
    save_page(owner)
    link_id = create_link(owner, originalUrl="https://example.com/a")
    response = post(owner, "/bio/buttons", {"linkId": link_id, "label": "x" * 81})
    assert response.status_code == 400
    assert field_error(response.text, "label") == "label: must be at most 80 characters"
    post(owner, "/bio/buttons", {"linkId": link_id})
    response = post(owner, "/bio/buttons", {"linkId": link_id})
    assert field_error(response.text, "linkId") == f"linkId: link {link_id} is already on the page"
    response = post(owner, "/bio/buttons/new", {"originalUrl": "javascript:alert(1)", "label": "Bad"})
    assert response.status_code == 400
    assert field_error(response.text, "originalUrl").startswith("originalUrl: ")
    assert 'value="Bad"' in response.text
    assert buttons_of(owner, conn) == [("example.com", False)]
    assert post(owner, f"/bio/buttons/{link_id}/move", {"direction": "sideways"}).status_code == 400


def test_a_search_narrows_the_links_offered(owner):
    save_page(owner)
    create_link(owner, originalUrl="https://example.com/cats", title="Cats")
    create_link(owner, originalUrl="https://example.com/dogs", title="Dogs")
    text = owner.get("/bio?find=cats").text
    assert "Cats" in text and "Dogs" not in text
    assert "No link that is not on the page matches “nothing”." in owner.get("/bio?find=nothing").text


def test_moving_keeps_every_button_once():
    assert validation.moved(["a", "b", "c"], "c", -1) == ["a", "c", "b"]
    assert validation.moved(["a", "b", "c"], "a", -1) == ["a", "b", "c"]
    assert validation.moved(["a", "b", "c"], "a", 1) == ["b", "a", "c"]
    assert validation.moved(["a", "b", "c"], "c", 1) == ["a", "b", "c"]
    with pytest.raises(NotFoundError):
        validation.moved(["a"], "z", 1)


# Statistics


def test_the_statistics_show_views_per_day_and_click_through_per_button(owner, conn):
    save_page(owner)
    post(owner, "/bio/buttons/new", {"originalUrl": "https://example.com/one", "label": "One"})
    post(owner, "/bio/buttons/new", {"originalUrl": "https://example.com/two", "label": "Two"})
    services = owner.app.state.services
    # Four visitors (a view is counted once per visitor a day) and a previewer (never counted).
    for agent in (*(IPHONE.replace("Mobile/15E148", f"Mobile/15E14{n}") for n in range(4)), FACEBOOK_BOT):
        assert owner.get("/@alice", headers={"User-Agent": agent}).status_code == 200
    account_id = accounts.account_for(conn, OWNER)["id"]
    first = next(b for b in owner.blocking_portal.call(services.bio.page, account_id).buttons if b.label == "One")
    tap = {"User-Agent": IPHONE, "Referer": f"{SHORT_HOST}/@alice"}
    assert owner.get(f"/l/{first.short_code}", headers=tap, follow_redirects=False).status_code in (200, 302)
    owner.blocking_portal.call(services.recorder.flush)
    page = owner.get("/bio/stats?days=7")
    assert page.status_code == 200
    assert "Views by day" in page.text and "4 views in total" in page.text
    rows = re.findall(r"<tr><td>([^<]*)</td>.*?Clicks: </span>([^<]*)</td>.*?Of views: </span>([^<]*)</td>", page.text)
    assert rows == [("One", "1", "25%"), ("Two", "0", "0%")]
    assert '<option value="7" selected>Last 7 days</option>' in page.text
    wrong = owner.get("/bio/stats?days=999")
    assert wrong.status_code == 400 and field_error(wrong.text, "days") == "days: must be 1-366"
    assert "Views by day" in wrong.text  # the default period instead


# Others' pages, and forged forms


def test_no_url_reaches_another_accounts_page_or_buttons(make_client, conn, owner):
    save_page(owner, "alice", description="owner's private words", published=False)
    link_id = create_link(owner, originalUrl="https://example.com/private")
    post(owner, "/bio/buttons", {"linkId": link_id, "label": "Secret"})
    intruder = signed_in(make_client, conn, INTRUDER)
    # Without a page of its own, and then with one: the owner's never shows nor changes.
    for has_page in (False, True):
        if has_page:
            save_page(intruder, "mallory")
        editor = intruder.get("/bio").text
        assert "alice" not in editor and "private" not in editor and "Secret" not in editor
        for path in (
            f"/bio/buttons/{link_id}/remove",
            f"/bio/buttons/{link_id}/label",
            *(() if has_page else ("/bio/stats", "/bio/qr", "/bio/delete", "/bio/buttons/new")),
        ):
            response = intruder.get(path)
            assert response.status_code == 404, path
            assert "private" not in response.text and "Secret" not in response.text
        for path, data in (
            (f"/bio/buttons/{link_id}/hidden", {"hidden": "true"}),
            (f"/bio/buttons/{link_id}/move", {"direction": "down"}),
            (f"/bio/buttons/{link_id}/remove", {}),
            (f"/bio/buttons/{link_id}/label", {"label": "Mine now"}),
            ("/bio/buttons", {"linkId": link_id}),
        ):
            assert post(intruder, path, data).status_code == 404, (path, has_page)
    assert post(intruder, "/bio/delete").status_code == 303  # its own page, not the owner's
    assert buttons_of(owner, conn) == [("Secret", False)]
    assert "owner&#39;s private words" in owner.get("/bio").text


def test_every_form_needs_this_sessions_token(owner, conn):
    save_page(owner)
    link_id = create_link(owner, originalUrl="https://example.com/a")
    post(owner, "/bio/buttons", {"linkId": link_id})
    for path, data in (
        ("/bio", {"handle": "stolen", "title": "Stolen"}),
        ("/bio/buttons", {"linkId": link_id}),
        ("/bio/buttons/new", {"originalUrl": "https://evil.example/"}),
        (f"/bio/buttons/{link_id}/hidden", {"hidden": "true"}),
        (f"/bio/buttons/{link_id}/move", {"direction": "up"}),
        (f"/bio/buttons/{link_id}/remove", {}),
        (f"/bio/buttons/{link_id}/label", {"label": "Forged"}),
        ("/bio/delete", {}),
    ):
        for token in ({}, {"csrf": "forged"}):
            response = owner.post(path, data={**data, **token}, follow_redirects=False)
            assert response.status_code == 403 and "This form has expired" in response.text, path
    assert buttons_of(owner, conn) == [("example.com", False)]
    assert owner.get("/@alice", headers={"User-Agent": IPHONE}).status_code == 200
