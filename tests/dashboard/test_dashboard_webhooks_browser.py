"""The dashboard's Webhooks page in Chromium, on a real server process, against a real receiver
that verifies each request: add an endpoint with the keyboard at phone width, see its secret
once, its delivery log, send a test event, replay, and the notice of a disabled endpoint; every
page axe-clean and no wider than a 375 px phone, light and dark."""

from __future__ import annotations

import json

import pytest

from shortlink.accounts import service as accounts
from shortlink.accounts import sessions
from shortlink.storage import connect
from shortlink.storage import webhooks as webhook_store
from tests.support.accessibility import light_and_dark_problems
from tests.support.browser import PHONE, chromium_and_destination, sign_in_with_chromium, wait_for_text
from tests.support.dashboard import password_hash
from tests.support.helpers import wait_for
from tests.support.receiver import running_receiver
from throwaway.live_server import LiveServer

EMAIL, PASSWORD = "hooks@example.com", "a long enough password"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = LiveServer(tmp_path_factory.mktemp("webhooks"), fetcher_allow_private_addresses="true")
    conn = connect(server.db)
    sessions.set_password(conn, EMAIL, password_hash(PASSWORD))
    conn.close()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser(server):
    with chromium_and_destination() as launched:
        yield launched


def test_endpoints_log_test_replay_and_the_disabled_notice(server, browser):
    conn = connect(server.db)
    key = accounts.create_key(conn, EMAIL).key
    conn.close()
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.get_by_role("link", name="Webhooks").click()
    page.wait_for_url(server.base_url + "/webhooks")
    with running_receiver() as receiver:
        # No event chosen: the form says so, beside the field, and keeps what was typed.
        page.get_by_label("Endpoint URL").fill(receiver.url)
        page.get_by_role("button", name="Add the endpoint").click()
        page.get_by_text("events:", exact=False).first.wait_for()
        assert page.get_by_label("Endpoint URL").input_value() == receiver.url
        # With the keyboard only: a checkbox ticked with Space, the form sent with Enter.
        page.get_by_label("link.created").focus()
        page.keyboard.press("Space")
        page.get_by_label("Description (optional)").focus()
        page.keyboard.type("CRM")
        page.keyboard.press("Enter")
        secret = page.get_by_role("textbox", name="Signing secret").input_value()
        assert secret.startswith("whsec_")
        receiver.secrets = [secret]
        page.get_by_role("link", name=receiver.url).click()
        hook_url = page.url
        assert "No deliveries yet." in page.content() and secret not in page.content()

        status, body = server.request(
            "POST",
            "/api/v1/links",
            json.dumps({"originalUrl": "https://example.com/hooked"}),
            {"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        assert status == 201, body
        wait_for(lambda: receiver.count() >= 1, what="link.created")
        assert receiver.received[0].verified_by == [secret]
        # The attempt is recorded once its answer is read, after the receiver counted it; and the
        # page names the endpoint's events above its log: wait for the log's row.
        wait_for_text(page, hook_url, "<code>link.created</code>")
        assert "thanks" in page.content()

        page.get_by_role("button", name="Send a test event").click()
        page.get_by_text("A test event is on its way").wait_for()
        wait_for(lambda: receiver.count() >= 2, what="the test event")
        assert receiver.types()[-1] == "webhook.test"
        wait_for_text(page, hook_url, "<code>webhook.test</code>")
        page.get_by_role("button", name=f"Replay {receiver.received[0].headers['webhook-id']}").click()
        page.get_by_text("Queued again").wait_for()
        wait_for(lambda: receiver.count() >= 3, what="the replay")
        assert receiver.received[-1].headers["webhook-id"] == receiver.received[0].headers["webhook-id"]

    # An endpoint disabled after days of failures says so on both pages, and comes back on.
    conn = connect(server.db)
    row = conn.execute("SELECT id FROM webhook_endpoints").fetchone()
    webhook_store.disable_endpoint(conn, row[0], "failing without a success since 2026-11-20", "2026-11-23T00:00:00Z")
    conn.close()
    page.goto(server.base_url + "/webhooks")
    assert "Disabled:" in page.content() and "failing without a success" in page.content()
    pages = {"webhooks": page.url, "webhook": hook_url}
    page.goto(hook_url)
    assert "This endpoint is disabled" in page.content()
    problems = []
    shown = browser.new_context(viewport=PHONE, storage_state=context.storage_state()).new_page()
    for name, url in pages.items():
        shown.goto(url)
        problems += light_and_dark_problems(shown, (name,), f"dashboard-{name}-phone")
    shown.context.close()
    assert problems == [], "\n".join(map(str, problems))
    page.get_by_role("button", name="Turn it back on").click()
    page.get_by_text("Turned back on").wait_for()
    assert "This endpoint is disabled" not in page.content()
    context.close()


def test_an_endpoint_is_changed_its_secret_rotated_and_it_is_deleted(server, browser):
    conn = connect(server.db)
    key = accounts.create_key(conn, EMAIL).key
    conn.close()
    auth = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    problems = []

    def check(name: str) -> None:
        problems.extend(light_and_dark_problems(page, (name,), f"dashboard-{name}-phone"))

    with running_receiver() as receiver:
        status, body = server.request(
            "POST", "/api/v1/webhooks", json.dumps({"url": receiver.url, "events": ["link.created"]}), auth
        )
        assert status == 201, body
        created = json.loads(body)["data"]
        hook_url = f"{server.base_url}/webhooks/{created['id']}"
        page.goto(hook_url)

        # Bad input: no event left ticked; the form says so beside the field and keeps the rest.
        page.get_by_label("Description (optional)").fill("Billing")
        page.get_by_label("link.created").uncheck()
        page.get_by_role("button", name="Save changes").click()
        page.get_by_text("The changes were not saved").wait_for()
        assert "events:" in page.locator("#e-events").inner_text()
        assert page.get_by_label("Description (optional)").input_value() == "Billing"
        check("webhook-edit-error")
        # Changed: another event, a description and a new path.
        page.get_by_label("link.updated").check()
        page.get_by_label("Endpoint URL").fill(receiver.url + "/billing")
        page.get_by_role("button", name="Save changes").click()
        page.get_by_text("Saved: the next events go out as changed.").wait_for()
        status, body = server.request("GET", f"/api/v1/webhooks/{created['id']}", None, auth)
        changed = json.loads(body)["data"]
        assert (changed["url"], changed["events"], changed["description"]) == (
            receiver.url + "/billing",
            ["link.updated"],
            "Billing",
        )

        # Rotated, after a confirmation: the new secret shown once; both sign during the overlap.
        page.get_by_role("link", name="Rotate the signing secret").click()
        page.get_by_role("heading", name=f"Rotate the signing secret of {receiver.url}/billing?").wait_for()
        assert page.get_by_label("The current secret keeps signing").input_value() == "86400"
        check("webhook-rotate")
        page.get_by_role("button", name="Rotate the secret").click()
        new_secret = page.get_by_role("textbox", name="New signing secret").input_value()
        assert new_secret.startswith("whsec_") and new_secret != created["secret"]
        assert "The previous secret signs beside it until" in page.content()
        check("webhook-rotated")
        page.goto(hook_url)
        assert new_secret not in page.content() and "The previous secret signs too until" in page.content()
        receiver.secrets = [created["secret"], new_secret]
        status, body = server.request(
            "POST", "/api/v1/links", json.dumps({"originalUrl": "https://example.com/r"}), auth
        )
        assert status == 201, body
        link_id = json.loads(body)["data"]["id"]
        status, _ = server.request("PATCH", f"/api/v1/links/{link_id}", json.dumps({"title": "Rotated"}), auth)
        assert status == 200
        wait_for(lambda: receiver.count() >= 1, what="link.updated")
        assert receiver.received[0].headers["host"] and receiver.types() == ["link.updated"]
        assert receiver.received[0].verified_by == [created["secret"], new_secret]
        check("webhook")

        # Deleted, after a confirmation that says what goes with it.
        page.get_by_role("link", name="Delete this endpoint").click()
        page.get_by_role("heading", name=f"Delete {receiver.url}/billing?").wait_for()
        assert "This cannot be undone." in page.content()
        check("webhook-delete")
        page.get_by_role("button", name="Delete the endpoint").click()
        page.wait_for_url(server.base_url + "/webhooks?deleted=1")
        page.get_by_text("The endpoint was deleted").wait_for()
        assert receiver.url + "/billing" not in page.content()
        check("webhooks-deleted")
        status, _ = server.request("GET", f"/api/v1/webhooks/{created['id']}", None, auth)
        assert status == 404
    context.close()
    assert problems == [], "\n".join(map(str, problems))
