"""The domain MCP tools through the SDK's own client against a real server process that asks a
real DNS server on 127.0.0.1 (throwaway.dns_server): each answers what the API's /domains
answers for the same key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.mcp.test_mcp import MODERN, api, api_data, call, call_error, mcp_client, new_account
from throwaway.dns_server import DnsServer
from throwaway.live_server import LiveServer


@pytest.fixture(scope="module")
def dns() -> Iterator[DnsServer]:
    with DnsServer() as server:
        yield server


@pytest.fixture(scope="module")
def server(tmp_path_factory, dns) -> Iterator[LiveServer]:
    live = LiveServer(tmp_path_factory.mktemp("mcp-domains"), domains_nameservers=dns.address).start()
    yield live
    live.stop()


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_the_domain_tools_add_list_and_verify_as_the_api_does(server, dns, mode):
    key = new_account(server).key
    name = f"go-{mode}.brand.example"
    async with mcp_client(server, key, mode) as client:
        assert (await call(client, "list_domains", {})).structured_content == {"data": []}
        added = await call(client, "add_domain", {"name": name, "notFoundRedirect": "https://brand.example/"})
        domain = added.structured_content
        assert domain == api_data(server, key, f"/domains/{domain['id']}")
        record = domain["verification"]
        assert record["name"] == f"_shortlink-verify.{name}" and domain["notFoundRedirect"] == "https://brand.example/"
        # The summary tells the assistant the record to create and what to call next.
        assert record["value"] in added.content[0].text and "verify_domain" in added.content[0].text

        checked = await call(client, "verify_domain", {"id": domain["id"]})
        assert checked.structured_content["verified"] is False and "_shortlink-verify" in checked.content[0].text
        dns.set_txt(record["name"], record["value"])
        checked = await call(client, "verify_domain", {"id": domain["id"]})
        assert checked.structured_content["verified"] is True
        assert checked.structured_content == api_data(server, key, f"/domains/{domain['id']}")
        listed = await call(client, "list_domains", {})
        status, body = api(server, key, "GET", "/domains")
        assert status == 200 and listed.structured_content == body
        assert f"{name} ({domain['id']}): verified" in listed.content[0].text


async def test_the_domain_tools_refuse_with_the_apis_errors(server):
    key, other = new_account(server).key, new_account(server).key
    async with mcp_client(server, key) as client:
        code, message = await call_error(client, "add_domain", {"name": "https://go.brand.example/"})
        assert (code, message) == (
            "VALIDATION_ERROR",
            "name: must be a bare domain name such as links.example.com (no scheme, port or path)",
        )
        code, _ = await call_error(client, "add_domain", {"name": "go.brand.example", "colour": "red"})
        assert code == "VALIDATION_ERROR"
        mine = (await call(client, "add_domain", {"name": "taken.brand.example"})).structured_content
        code, _ = await call_error(client, "verify_domain", {"id": "dom_nope"})
        assert code == "NOT_FOUND"
    async with mcp_client(server, other) as client:
        code, message = await call_error(client, "add_domain", {"name": "taken.brand.example"})
        assert (code, message) == ("CONFLICT", "taken.brand.example is already connected to another account")
        code, _ = await call_error(client, "verify_domain", {"id": mine["id"]})
        assert code == "NOT_FOUND"
