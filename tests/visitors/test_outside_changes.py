"""What a server caches (a link's redirect, its rules and the app it opens) follows changes that
another process commits (the CLI, `shortlink mcp`, a second server without Redis) within about a
second, on both backends; commits that change nothing cached (keys, click batches, the webhook
delivering process's bookkeeping) leave the cache alone."""

from __future__ import annotations

import pytest

from shortlink.accounts import service as accounts
from tests.support.helpers import outside_changes_seen, outside_changes_watched
from tests.support.visitors import ANDROID_CHROME, IPHONE, make_link, visit

# The server's watcher looks once a second: the test waits for it some five times.
pytestmark = [pytest.mark.both_backends, pytest.mark.slow(seconds=6)]

APP = {"name": "Shop", "android": {"package": "com.example.shop", "sha256Fingerprints": [":".join(["AB"] * 32)]}}

RULES = {"rules": [{"conditions": [{"type": "os", "values": ["ios"]}], "url": "https://example.com/ios"}]}


def cached(client, code: str) -> bool:
    return client.app.state.services.link_cache.get(code) is not ...


def test_rules_and_apps_changed_elsewhere_reach_the_cache_and_other_commits_do_not(make_client, auth, conn):
    server, elsewhere = make_client(), make_client()  # two processes over one database, no Redis
    link = make_link(server, auth, originalUrl="https://shop.example/product/42")
    code = link["shortCode"]
    outside_changes_seen(server, conn)
    assert visit(server, code, IPHONE).headers["location"] == "https://shop.example/product/42"
    assert server.app.state.services.link_cache.get(code) is not ...

    accounts.create_key(conn, "elsewhere@example.com")  # a commit that changes nothing cached
    outside_changes_watched(server)  # it looked once since, at least
    assert server.app.state.services.link_cache.get(code) is not ..., "a commit of nothing cached emptied it"

    assert elsewhere.put(f"/api/v1/links/{link['id']}/rules", json=RULES, headers=auth).status_code == 200
    outside_changes_seen(server, conn)
    assert visit(server, code, IPHONE).headers["location"] == "https://example.com/ios"

    assert elsewhere.put(f"/api/v1/links/{link['id']}/rules", json={"rules": []}, headers=auth).status_code == 200
    outside_changes_seen(server, conn)
    assert visit(server, code, IPHONE).headers["location"] == "https://shop.example/product/42"

    app = elsewhere.post("/api/v1/apps", json=APP, headers=auth).json()["data"]
    body = {"appId": app["id"], "deepPath": "/product/42"}
    assert elsewhere.put(f"/api/v1/links/{link['id']}/app", json=body, headers=auth).status_code == 200
    outside_changes_seen(server, conn)
    assert visit(server, code, ANDROID_CHROME).headers["location"].startswith("intent://sho.rt/product/42#Intent;")
