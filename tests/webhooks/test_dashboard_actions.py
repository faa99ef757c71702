"""The dashboard's change, rotate and delete of a webhook endpoint through the real app: only
the endpoint's own account, only with the page's CSRF token, and a tampered form answered with
a message, never a 500."""

from __future__ import annotations

import re

from tests.support.dashboard import as_browser, post, signed_in


def test_the_actions_refuse_others_a_missing_token_and_a_tampered_overlap(make_client, conn):
    def browser_client(**overrides):
        return as_browser(make_client(**overrides), False)

    owner = signed_in(browser_client, conn, "owner@example.com", fetcher_allow_private_addresses=True)
    made = post(owner, "/webhooks", {"url": "https://hooks.example.com/in", "events": "link.created"}, page="/webhooks")
    assert made.status_code == 200, made.text
    hook = re.search(r'href="/webhooks/(whk_[^"]+)"', made.text).group(1)
    page = f"/webhooks/{hook}"

    intruder = signed_in(browser_client, conn, "intruder@example.com")
    assert intruder.get(f"{page}/rotate").status_code == 404
    assert intruder.get(f"{page}/delete").status_code == 404
    for action, data in (("edit", {"url": "https://evil.example/", "events": "link.created"}), ("delete", {})):
        assert post(intruder, f"{page}/{action}", data).status_code == 404, action
    # Without the page's token nothing changes.
    assert owner.post(f"{page}/delete", data={}, follow_redirects=False).status_code == 403

    tampered = post(owner, f"{page}/rotate", {"overlapSeconds": "9999999"}, page=f"{page}/rotate")
    assert tampered.status_code == 400 and "choose how long the current secret keeps signing" in tampered.text
    assert post(owner, f"{page}/rotate", {"overlapSeconds": "soon"}, page=f"{page}/rotate").status_code == 400
    rotated = post(owner, f"{page}/rotate", {"overlapSeconds": "0"}, page=f"{page}/rotate")
    assert rotated.status_code == 200 and "The previous secret no longer signs." in rotated.text
    assert re.search(r'value="whsec_[^"]+" readonly', rotated.text)
    assert "whsec_" not in owner.get(page).text

    deleted = post(owner, f"{page}/delete", page=f"{page}/delete")
    assert deleted.status_code == 303 and deleted.headers["location"] == "/webhooks?deleted=1"
    assert owner.get(page).status_code == 404
