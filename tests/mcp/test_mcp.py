"""MCP end to end: the SDK's own client against a real server process (and `shortlink mcp`
over stdio), every tool checked against the JSON API for the same key."""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import mcp_types as types
import pytest
from litestar.exceptions import WebSocketDisconnect
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from shortlink.accounts import service as accounts
from shortlink.accounts.schema import CreatedKey
from shortlink.links.schema import CreateLink, UpdateLink
from shortlink.mcp.schemas import object_schema
from shortlink.storage import connect
from tests.support.helpers import wait_for
from throwaway.live_server import LiveServer

REQUESTS_PER_MINUTE = 50
MODERN = "2026-07-28"  # the stateless per-request revision; "legacy" is the initialize handshake
CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
TOOL_NAMES = {
    "whoami",
    "create_link",
    "create_links",
    "list_links",
    "get_link",
    "update_link",
    "delete_link",
    "get_link_analytics",
    "get_account_analytics",
    "get_qr_code",
    "get_link_rules",
    "set_link_rules",
    "test_link_rules",
    "set_link_destination",
    "clear_link_destination",
    "list_domains",
    "add_domain",
    "verify_domain",
}
# (readOnlyHint, destructiveHint, idempotentHint)
ANNOTATIONS = {
    "whoami": (True, False, True),
    "create_link": (False, False, False),
    "create_links": (False, False, False),
    "list_links": (True, False, True),
    "get_link": (True, False, True),
    "update_link": (False, True, True),
    "delete_link": (False, True, True),
    "get_link_analytics": (True, False, True),
    "get_account_analytics": (True, False, True),
    "get_qr_code": (True, False, True),
    "get_link_rules": (True, False, True),
    "set_link_rules": (False, True, True),
    "test_link_rules": (True, False, True),
    "set_link_destination": (False, True, True),
    "clear_link_destination": (False, True, True),
    "list_domains": (True, False, True),
    "add_domain": (False, False, True),
    "verify_domain": (False, False, True),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[LiveServer]:
    live = LiveServer(tmp_path_factory.mktemp("mcp"), limits_requests_per_minute=str(REQUESTS_PER_MINUTE)).start()
    yield live
    live.stop()


_emails = iter(range(10**6))


def new_account(server: LiveServer) -> CreatedKey:
    conn = connect(server.db)
    try:
        return accounts.create_key(conn, f"user{next(_emails)}@example.com")
    finally:
        conn.close()


@pytest.fixture
def key(server) -> str:
    return new_account(server).key


@contextlib.asynccontextmanager
async def mcp_client(server: LiveServer, key: str | None, mode: str = MODERN) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(f"{server.base_url}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


def api(server: LiveServer, key: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    status, raw = server.request(method, f"/api/v1{path}", json.dumps(body) if body is not None else None, headers)
    return status, json.loads(raw) if raw.startswith(b"{") else raw


def api_data(server: LiveServer, key: str, path: str) -> Any:
    status, body = api(server, key, "GET", path)
    assert status == 200, body
    return body["data"]


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.content[0].type == "text" and result.content[0].text  # the summary
    return result


async def call_error(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[str, str]:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    error = result.structured_content["error"]
    assert result.content[0].text == f"{error['code']}: {error['message']}"
    return error["code"], error["message"]


def leaf_errors(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaf_errors(inner)]
    return [exc]


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_tools_are_listed_with_the_api_schemas_and_truthful_annotations(server, key, mode):
    async with mcp_client(server, key, mode) as client:
        assert (client.protocol_version == MODERN) is (mode == MODERN)
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOL_NAMES
    for name, (read_only, destructive, idempotent) in ANNOTATIONS.items():
        hints = tools[name].annotations
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
            read_only,
            destructive,
            idempotent,
        ), name
        assert tools[name].input_schema["type"] == "object" and tools[name].output_schema["type"] == "object"
        assert tools[name].input_schema["additionalProperties"] is False, name
    create = tools["create_link"].input_schema
    assert create == object_schema(CreateLink)
    assert set(create["properties"]) == {
        "originalUrl",
        "customCode",
        "title",
        "description",
        "iosUrl",
        "androidUrl",
        "password",
        "expiresAt",
    }
    assert create["required"] == ["originalUrl"]
    assert create["properties"]["customCode"]["anyOf"][0]["pattern"] == "^[A-Za-z0-9_-]+$"
    assert create["properties"]["originalUrl"]["format"] == "uri"  # the Structs' OpenAPI extras are kept
    update = tools["update_link"].input_schema
    assert update["required"] == ["id"]
    assert set(update["properties"]) == {"id", *object_schema(UpdateLink)["properties"]}
    assert set(tools["list_links"].input_schema["properties"]) == {
        "page",
        "limit",
        "search",
        "platform",
        "isActive",
        "shortCode",
    }
    assert tools["list_links"].input_schema["properties"]["limit"]["maximum"] == 100
    assert set(tools["get_account_analytics"].input_schema["properties"]) == {"days", "from", "to"}
    assert set(tools["get_link_analytics"].input_schema["properties"]) == {"id", "days", "from", "to"}
    qr = tools["get_qr_code"].input_schema["properties"]
    assert {"id", "format", "size", "color", "bgColor"} <= set(qr) and qr["format"]["enum"] == ["png", "svg"]
    assert "click history" in tools["delete_link"].description


def without_remaining(me: dict[str, Any]) -> dict[str, Any]:
    return {**me, "rateLimits": {**me["rateLimits"], "remaining": None}}


def visit(server: LiveServer, code: str) -> None:
    status, _ = server.request("GET", f"/l/{code}", headers={"User-Agent": CHROME})
    assert status == 302


def wait_for_clicks(server: LiveServer, key: str, link_id: str, clicks: int) -> None:
    wait_for(lambda: api_data(server, key, f"/links/{link_id}")["clickCount"] >= clicks, 15, f"{clicks} clicks")


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_every_tool_answers_what_the_api_answers(server, key, mode):
    expires = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with mcp_client(server, key, mode) as client:
        me = (await call(client, "whoami", {})).structured_content
        assert without_remaining(me) == without_remaining(api_data(server, key, "/me"))

        arguments = {
            "originalUrl": "https://www.instagram.com/p/C0ffee/",
            "customCode": f"insta-{mode[:6]}",
            "title": "Launch post",
            "description": "The spring launch, for Instagram",
            "iosUrl": "https://apps.apple.com/app/instagram/id389801252",
            "androidUrl": "https://play.google.com/store/apps/details?id=com.instagram.android",
            "password": "s3cret",
            "expiresAt": expires,
        }
        created = (await call(client, "create_link", arguments)).structured_content
        assert created == api_data(server, key, f"/links/{created['id']}")
        assert created["source"] == "MCP" and created["platform"] == "INSTAGRAM"
        assert created["description"] == arguments["description"] and created["isPasswordProtected"] is True

        listed = await call(client, "list_links", {"search": "insta", "platform": "INSTAGRAM", "limit": 5})
        status, body = api(server, key, "GET", "/links?search=insta&platform=INSTAGRAM&limit=5")
        assert status == 200 and listed.structured_content == body
        assert [link["id"] for link in body["data"]] == [created["id"]]

        fetched = (await call(client, "get_link", {"id": created["id"]})).structured_content
        assert fetched == created

        changed = await call(client, "update_link", {"id": created["id"], "title": "Renamed", "isActive": False})
        assert changed.structured_content == api_data(server, key, f"/links/{created['id']}")
        assert changed.structured_content["title"] == "Renamed" and changed.structured_content["isActive"] is False

        plain = await call(client, "create_link", {"originalUrl": "https://www.youtube.com/watch?v=dQw4w9WgXcQ"})
        link = plain.structured_content
        for _ in range(3):
            visit(server, link["shortCode"])
        wait_for_clicks(server, key, link["id"], 3)

        today = datetime.now(UTC).date()
        window = {"from": str(today - timedelta(days=1)), "to": str(today)}
        query = f"from={window['from']}&to={window['to']}"
        mcp_report = (await call(client, "get_link_analytics", {"id": link["id"], **window})).structured_content
        api_report = api_data(server, key, f"/links/{link['id']}/analytics?{query}")
        assert mcp_report["clicksInPeriod"] == 3
        assert same_report(mcp_report, api_report)
        mcp_totals = (await call(client, "get_account_analytics", window)).structured_content
        assert same_report(mcp_totals, api_data(server, key, f"/analytics?{query}"))
        assert mcp_totals["totalUrls"] == 2 and mcp_totals["topUrls"][0]["id"] == link["id"]

        png = await call(client, "get_qr_code", {"id": link["id"], "size": 256})
        image = png.content[1]
        assert image.type == "image" and image.mime_type == "image/png"
        assert base64.b64decode(image.data) == api(server, key, "GET", f"/links/{link['id']}/qr?format=png&size=256")[1]
        assert png.structured_content == {
            "id": link["id"],
            "shortUrl": link["shortUrl"],
            "format": "png",
            "mediaType": "image/png",
            "size": 256,
        }
        svg = await call(client, "get_qr_code", {"id": link["id"], "format": "svg", "color": "#123"})
        assert svg.content[1].type == "text" and svg.content[1].text.startswith("<svg")
        api_svg = api(server, key, "GET", f"/links/{link['id']}/qr?format=svg&color=123")[1]
        assert svg.content[1].text.encode() == api_svg

        deleted = await call(client, "delete_link", {"id": link["id"]})
        assert deleted.structured_content == {"id": link["id"], "deleted": True}
        assert api(server, key, "GET", f"/links/{link['id']}")[0] == 404
        assert (await call_error(client, "delete_link", {"id": link["id"]}))[0] == "NOT_FOUND"


def same_report(mcp_report: dict[str, Any], api_report: dict[str, Any]) -> bool:
    """Equal, but for clicksByHour: the last 24 hours from now, whose oldest hour can roll
    over between the two calls; every click of the test is recent, so its sum cannot."""
    hourly = [sum(hour["clicks"] for hour in report.pop("clicksByHour", [])) for report in (mcp_report, api_report)]
    return mcp_report == api_report and hourly[0] == hourly[1]


async def test_create_links_answers_what_the_bulk_endpoint_answers(server, key):
    items = [
        {"originalUrl": "https://example.com/one", "title": "Eins ✓"},
        {"originalUrl": "ftp://example.com/"},
        {"originalUrl": "https://example.com/two"},
    ]
    async with mcp_client(server, key) as client:
        answer = (await call(client, "create_links", {"links": items})).structured_content
    results = answer["data"]
    assert [(item["index"], item["status"]) for item in results] == [(0, 201), (1, 400), (2, 201)]
    assert results[1]["error"]["code"] == "VALIDATION_ERROR"
    for item in (results[0], results[2]):
        assert item["data"] == api_data(server, key, f"/links/{item['data']['id']}")
        assert item["data"]["source"] == "MCP"


async def test_a_request_without_a_valid_key_is_refused_with_401_before_the_sdk(server, key):
    message = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    for authorization in (None, "Bearer sl_live_" + "x" * 32, f"Basic {key}"):
        sent = {**headers, **({"Authorization": authorization} if authorization else {})}
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("POST", "/mcp", body=message, headers=sent)
        response = conn.getresponse()
        body = json.loads(response.read())
        conn.close()
        assert response.status == 401 and response.getheader("WWW-Authenticate") == "Bearer", authorization
        assert body["error"]["code"] == "UNAUTHORIZED"
    with pytest.raises(ExceptionGroup) as caught:  # the SDK's task groups wrap its error
        async with mcp_client(server, None, "legacy"):
            pass
    assert any(isinstance(leaf, MCPError) for leaf in leaf_errors(caught.value))


def test_only_posts_are_served_as_nothing_is_streamed_or_kept(server, key):
    for method in ("GET", "DELETE", "PUT"):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request(method, "/mcp", headers={"Authorization": f"Bearer {key}", "Accept": "text/event-stream"})
        response = conn.getresponse()
        body = json.loads(response.read())
        conn.close()
        assert (response.status, response.getheader("Allow"), body["error"]["code"]) == (405, "POST", "NOT_FOUND")


def test_a_websocket_to_mcp_is_refused(client):
    with pytest.raises(WebSocketDisconnect) as caught, client.websocket_connect("/mcp"):
        pass
    assert caught.value.code == 1008


async def test_a_key_revoked_during_a_session_fails_on_its_next_request(server):
    account = new_account(server)
    async with mcp_client(server, account.key) as client:
        await call(client, "whoami", {})
        conn = connect(server.db)
        accounts.revoke_key(conn, account.key_id)
        conn.close()
        with pytest.raises(MCPError):
            await client.call_tool("whoami", {})
    status, body = server.request("POST", "/mcp", b"{}", {"Authorization": f"Bearer {account.key}"})
    assert status == 401 and json.loads(body)["error"]["message"] == "Invalid or revoked API key"


async def test_an_inactive_subscription_is_refused_with_403(server):
    account = new_account(server)
    conn = connect(server.db)
    accounts.set_subscription(conn, account.email, False)
    conn.close()
    status, body = server.request("POST", "/mcp", b"{}", {"Authorization": f"Bearer {account.key}"})
    assert status == 403 and json.loads(body)["error"]["code"] == "SUBSCRIPTION_REQUIRED"


async def test_each_tool_call_counts_against_the_keys_budget_and_over_it_is_a_tool_error(server, key):
    async with mcp_client(server, key) as client:
        results = [await client.call_tool("whoami", {}) for _ in range(REQUESTS_PER_MINUTE + 4)]
        spent_at = time.monotonic()
        refused = next(number for number, result in enumerate(results, 1) if result.is_error)
        # A token refills every 60/REQUESTS_PER_MINUTE s, so a few calls more may pass.
        assert REQUESTS_PER_MINUTE < refused < REQUESTS_PER_MINUTE + 4
        result = results[refused - 1]
        error = result.structured_content["error"]
        assert error["code"] == "RATE_LIMITED"
        assert f"Rate limit of {REQUESTS_PER_MINUTE} requests per minute exceeded; retry in " in error["message"]
        assert result.content[0].text.startswith("RATE_LIMITED: ") and result.content[0].text.endswith(" s")
        assert len((await client.list_tools(cache_mode="refresh")).tools) == len(TOOL_NAMES)  # not a tool call
    # One budget for the API and MCP: the API finds it spent, but for the tokens that came back
    # since (one every 60/REQUESTS_PER_MINUTE s; a loaded machine is slow), where a budget of
    # its own would be nearly full.
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("GET", "/api/v1/me", headers={"Authorization": f"Bearer {key}"})
    response = conn.getresponse()
    response.read()
    conn.close()
    came_back = (time.monotonic() - spent_at) * REQUESTS_PER_MINUTE / 60
    assert int(response.headers["X-RateLimit-Remaining"]) <= came_back < REQUESTS_PER_MINUTE / 2
    assert response.status == 429 or came_back >= 1


PAST = "2001-01-01T00:00:00Z"
INVALID_ARGUMENTS = [
    ("create_link", {}, "originalUrl"),
    ("create_link", {"originalUrl": "ftp://example.com/file"}, "originalUrl"),
    ("create_link", {"originalUrl": 5}, "originalUrl"),
    ("create_link", {"originalUrl": "https://example.com", "customCode": "ab"}, "customCode"),
    ("create_link", {"originalUrl": "https://example.com", "customCode": "api"}, "customCode"),
    ("create_link", {"originalUrl": "https://example.com", "title": ""}, "title"),
    ("create_link", {"originalUrl": "https://example.com", "description": "x" * 501}, "description"),
    ("create_link", {"originalUrl": "https://example.com", "description": "   "}, "description"),
    ("create_link", {"originalUrl": "https://example.com", "iosUrl": "not a url"}, "iosUrl"),
    ("create_link", {"originalUrl": "https://example.com", "androidUrl": "javascript:alert(1)"}, "androidUrl"),
    ("create_link", {"originalUrl": "https://example.com", "password": "abc"}, "password"),
    ("create_link", {"originalUrl": "https://example.com", "expiresAt": PAST}, "expiresAt"),
    ("create_link", {"originalUrl": "https://example.com", "colour": "red"}, "colour"),
    ("list_links", {"page": 0}, "page"),
    ("list_links", {"limit": 101}, "limit"),
    ("list_links", {"limit": "5"}, "limit"),
    ("list_links", {"search": 5}, "search"),
    ("list_links", {"platform": "MYSPACE"}, "platform"),
    ("list_links", {"isActive": "true"}, "isActive"),
    ("list_links", {"shortCode": ["abc"]}, "shortCode"),
    ("get_link", {}, "id"),
    ("update_link", {"title": "No id"}, "id"),
    ("update_link", {"id": "LINK", "title": ""}, "title"),
    ("update_link", {"id": "LINK", "isActive": 1}, "isActive"),
    ("update_link", {"id": "LINK", "expiresAt": PAST}, "expiresAt"),
    ("update_link", {"id": "LINK", "password": "x"}, "password"),
    ("update_link", {"id": "LINK", "originalUrl": "https://example.org"}, "originalUrl"),
    ("update_link", {"id": "LINK"}, "body"),
    ("delete_link", {"id": 7}, "id"),
    ("get_link_analytics", {"id": "LINK", "days": 0}, "days"),
    ("get_link_analytics", {"id": "LINK", "days": 367}, "days"),
    ("get_account_analytics", {"days": "7"}, "days"),
    ("get_account_analytics", {"from": "yesterday"}, "from"),
    ("get_account_analytics", {"to": "2026-13-01"}, "to"),
    ("get_account_analytics", {"from": "2026-02-01", "to": "2026-01-01"}, "from"),
    ("get_qr_code", {"id": "LINK", "format": "gif"}, "format"),
    ("get_qr_code", {"id": "LINK", "size": 64}, "size"),
    ("get_qr_code", {"id": "LINK", "color": "red"}, "color"),
    ("get_qr_code", {"id": "LINK", "bgColor": "#12345"}, "bgColor"),
    ("get_qr_code", {"id": "LINK", "color": "#777", "bgColor": "#888"}, "color"),  # too little contrast
    ("get_qr_code", {"id": "LINK", "margin": 17}, "margin"),
    ("get_qr_code", {"id": "LINK", "errorCorrection": "Z"}, "errorCorrection"),
]


@pytest.fixture(scope="module")
def owned_link(server) -> tuple[str, str]:
    """An account (its key) and one of its links (its id), for cases that need a real link."""
    account = new_account(server)
    status, body = api(server, account.key, "POST", "/links", {"originalUrl": "https://example.com/owned"})
    assert status == 201
    return account.key, body["data"]["id"]


async def test_invalid_arguments_are_validation_errors_naming_the_field(server):
    # One key per tool: the cases of one tool stay within one minute's budget.
    for tool in dict.fromkeys(case[0] for case in INVALID_ARGUMENTS):
        key = new_account(server).key
        own_id = api(server, key, "POST", "/links", {"originalUrl": "https://example.com/mine"})[1]["data"]["id"]
        async with mcp_client(server, key) as client:
            for name, arguments, field in (case for case in INVALID_ARGUMENTS if case[0] == tool):
                sent = {name: own_id if value == "LINK" else value for name, value in arguments.items()}
                code, message = await call_error(client, tool, sent)
                assert (code, message.split(":")[0]) == ("VALIDATION_ERROR", field), (tool, arguments, message)


async def test_another_accounts_link_is_not_found_and_a_taken_code_is_a_conflict(server, owned_link, key):
    owner_key, link_id = owned_link
    async with mcp_client(server, key) as client:
        for tool, extra, method, path in (
            ("get_link", {}, "GET", ""),
            ("update_link", {"isActive": False}, "PATCH", ""),
            ("delete_link", {}, "DELETE", ""),
            ("get_link_analytics", {}, "GET", "/analytics"),
            ("get_qr_code", {}, "GET", "/qr"),
        ):
            error = await call_error(client, tool, {"id": link_id, **extra})
            status, body = api(server, key, method, f"/links/{link_id}{path}", extra or None)
            assert status == 404 and error == ("NOT_FOUND", body["error"]["message"]), tool
        taken = api_data(server, owner_key, f"/links/{link_id}")["shortCode"]
        code, message = await call_error(
            client, "create_link", {"originalUrl": "https://a.example", "customCode": taken}
        )
        assert (code, message) == ("CONFLICT", f"customCode '{taken}' is already taken")
        with pytest.raises(MCPError):
            await client.call_tool("no_such_tool", {})
    assert api_data(server, owner_key, f"/links/{link_id}")["isActive"] is True


def stdio_parameters(server: LiveServer, key: str, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "shortlink", "mcp", "--config", str(server.config), *extra],
        env={**server.env, "SHORTLINK_API_KEY": key},
    )


@pytest.mark.slow
@pytest.mark.parametrize("relay", [False, True], ids=["database", "url"])
async def test_shortlink_mcp_serves_the_tools_over_stdio(server, key, relay):
    account_email = api_data(server, key, "/me")["user"]["email"]
    extra = ("--url", server.base_url) if relay else ()
    async with Client(stdio_parameters(server, key, *extra)) as client:
        me = (await call(client, "whoami", {})).structured_content
        assert me["user"]["email"] == account_email
        created = await call(
            client, "create_link", {"originalUrl": "https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC"}
        )
    link = api_data(server, key, f"/links/{created.structured_content['id']}")
    assert link == created.structured_content and link["source"] == "MCP" and link["platform"] == "SPOTIFY"


def run_mcp_command(server: LiveServer, key: str | None) -> subprocess.CompletedProcess:
    env = {name: value for name, value in server.env.items() if name != "SHORTLINK_API_KEY"}
    if key is not None:
        env["SHORTLINK_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "shortlink", "mcp", "--config", str(server.config)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_shortlink_mcp_without_a_usable_key_stops_with_one_line(server):
    missing = run_mcp_command(server, None)
    assert missing.returncode == 1 and "set SHORTLINK_API_KEY to an API key" in missing.stderr
    revoked = run_mcp_command(server, "sl_live_" + "y" * 32)
    assert revoked.returncode == 1 and "Invalid or revoked API key" in revoked.stderr
    assert revoked.stdout == ""  # stdout is the protocol's: nothing else is ever written there


def test_the_key_is_never_on_the_command_line():
    usage = subprocess.run([sys.executable, "-m", "shortlink", "mcp", "--help"], capture_output=True, text=True)
    assert usage.returncode == 0 and "--url" in usage.stdout and "key" not in usage.stdout.replace("API_KEY", "")


def raw_post(server: LiveServer, key: str, body: bytes, **headers: str) -> tuple[int, bytes]:
    sent = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **headers,
    }
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/mcp", body=body, headers=sent)
    response = conn.getresponse()
    answer = response.status, response.read()
    conn.close()
    return answer


def test_another_sites_host_or_origin_is_refused_against_dns_rebinding(server, key):
    message = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}'
    assert raw_post(server, key, message, Host="evil.example")[0] == 421
    assert raw_post(server, key, message, Host="localhost.evil.example")[0] == 421
    assert raw_post(server, key, message, Host=f"evil.example:{server.port}")[0] == 421
    assert raw_post(server, key, message, Origin="http://evil.example")[0] == 403
    assert raw_post(server, key, message, Origin=f"http://evil.example:{server.port}")[0] == 403
    for allowed in ({"Origin": server.base_url}, {"Host": f"localhost:{server.port}"}):
        status, raw = raw_post(server, key, message, **allowed)
        assert status == 200 and json.loads(raw)["result"]["tools"], allowed


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"[]", -32600),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "x"}', -32600),
    ],
)
def test_a_malformed_json_rpc_request_gets_a_clean_json_rpc_error(server, key, body, code):
    status, raw = raw_post(server, key, body)
    answer = json.loads(raw)
    assert status == 400 and answer["jsonrpc"] == "2.0" and answer["id"] is None
    assert answer["error"]["code"] == code
    message = answer["error"]["message"]
    for internal in ("validation error", "JSONRPC", "union[", "pydantic", "model_type", "Input should"):
        assert internal not in message, message
