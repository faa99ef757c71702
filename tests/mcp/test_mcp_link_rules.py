"""The link-rules MCP tools through the SDK's own client against a real server process: each
answers what the API's extension endpoints answer for the same key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.mcp.test_mcp import MODERN, api, api_data, call, call_error, mcp_client, new_account
from throwaway.live_server import LiveServer

WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:130.0) Gecko/20100101 Firefox/130.0"
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[LiveServer]:
    live = LiveServer(tmp_path_factory.mktemp("mcp-rules"), public_blocked_hosts="blocked.example").start()
    yield live
    live.stop()


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_the_rules_tools_answer_what_the_api_answers(server, mode):
    key = new_account(server).key
    link = api(server, key, "POST", "/links", {"originalUrl": "https://www.amazon.com/dp/B0MCP"})[1]["data"]
    rules = {
        "rules": [
            {"conditions": [{"type": "os", "values": ["iOS"]}], "url": "https://example.com/ios"},
            {"conditions": [{"type": "country", "values": ["gb"]}], "rewrite": {"table": "amazon"}},
        ],
        "maxClicks": 10,
    }
    async with mcp_client(server, key, mode) as client:
        empty = await call(client, "get_link_rules", {"id": link["id"]})
        assert empty.structured_content == api_data(server, key, f"/links/{link['id']}/rules")
        stored = await call(client, "set_link_rules", {"id": link["id"], **rules})
        assert stored.structured_content == api_data(server, key, f"/links/{link['id']}/rules")
        assert stored.structured_content["rules"][1]["conditions"][0]["values"] == ["GB"]
        assert "2 rules; max clicks 10" in stored.content[0].text
        for visit in ({"userAgent": IPHONE}, {"userAgent": WINDOWS, "country": "GB"}, {"userAgent": WINDOWS}):
            tested = await call(client, "test_link_rules", {"id": link["id"], **visit})
            status, answer = api(server, key, "POST", f"/links/{link['id']}/rules/test", visit)
            assert status == 200 and tested.structured_content == answer["data"]
        tested = await call(client, "test_link_rules", {"id": link["id"], "userAgent": WINDOWS, "country": "GB"})
        assert tested.content[0].text == "rule 1: 302, https://www.amazon.co.uk/dp/B0MCP"
        code, message = await call_error(
            client,
            "set_link_rules",
            {"id": link["id"], "rules": [{"split": [{"url": "https://example.com/a", "weight": 100}]}]},
        )
        assert (code, message) == ("VALIDATION_ERROR", "rules[0].split: must have 2-10 variants (it has 1)")
        code, _ = await call_error(client, "get_link_rules", {"id": "lnk_nope"})
        assert code == "NOT_FOUND"


async def test_set_link_rules_refuses_blocked_hosts_and_ways_back_to_the_link(server):
    """The tool goes through the checks the API's PUT does: a rewrite's host on the blocklist,
    a rule's URL to one of our short links that leads back to this link."""
    key = new_account(server).key
    home = api(server, key, "POST", "/links", {"originalUrl": "https://example.com/home"})[1]["data"]
    back = {"originalUrl": f"{server.base_url}/l/{home['shortCode']}"}
    back = api(server, key, "POST", "/links", back)[1]["data"]
    germany = [{"type": "country", "values": ["DE"]}]
    async with mcp_client(server, key, MODERN) as client:
        for rules, message in (
            (
                [{"conditions": germany, "rewrite": {"hosts": {"DE": "shop.blocked.example"}}}],
                "rules[0].rewrite.hosts.DE: shop.blocked.example (under blocked.example) is a host this service"
                " does not link to",
            ),
            (
                [{"conditions": germany, "url": f"{server.base_url}/l/{back['shortCode']}"}],
                f"rules[0].url: leads to /l/{back['shortCode']}, which leads back to this link"
                f" (/l/{home['shortCode']}): a loop",
            ),
        ):
            code, text = await call_error(client, "set_link_rules", {"id": home["id"], "rules": rules})
            assert (code, text) == ("VALIDATION_ERROR", message)
        assert api_data(server, key, f"/links/{home['id']}/rules")["rules"] == []


async def test_the_destination_tools_send_everyone_elsewhere_and_back_as_the_api_does(server):
    key = new_account(server).key
    link = api(server, key, "POST", "/links", {"originalUrl": "https://example.com/printed"})[1]["data"]
    async with mcp_client(server, key, MODERN) as client:
        moved = await call(client, "set_link_destination", {"id": link["id"], "url": "https://example.org/new"})
        assert moved.structured_content == api_data(server, key, f"/links/{link['id']}/destination")
        assert moved.structured_content["history"][0]["door"] == "mcp"
        assert moved.content[0].text.startswith(f"{link['id']}: visitors go to https://example.org/new since ")
        code, message = await call_error(
            client, "set_link_destination", {"id": link["id"], "url": "https://blocked.example/x"}
        )
        assert (code, message) == (
            "VALIDATION_ERROR",
            "url: leads to blocked.example, which this service does not link to",
        )
        back = await call(client, "clear_link_destination", {"id": link["id"]})
        assert back.structured_content["url"] == "https://example.com/printed"
        assert [change["url"] for change in back.structured_content["history"]] == [
            "https://example.com/printed",
            "https://example.org/new",
        ]
        code, _ = await call_error(client, "clear_link_destination", {"id": "lnk_nope"})
        assert code == "NOT_FOUND"
