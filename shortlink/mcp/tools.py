"""The MCP tools, shared by both transports: each one a thin call into the application layer.

A tool call is charged one request against the key's per-minute budget, its arguments
are decoded with the same msgspec Structs (and the same strictness) as the API's bodies,
and any error of the domain becomes a tool result with `isError` carrying the API's
error code and message: the assistant reads it and can correct itself.
"""

from __future__ import annotations

import base64
import functools
import importlib.metadata
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import mcp_types as types
import msgspec
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from msgspec import Meta

from shortlink import qr
from shortlink.accounts.schema import Principal
from shortlink.analytics.ranges import DEFAULT_DAYS, MAX_DAYS
from shortlink.analytics.report import AccountAnalytics, AnalyticsFigures, LinkAnalytics
from shortlink.application.accounts import Me
from shortlink.errors import ErrorCode, ShortlinkError, field_error
from shortlink.links.bulk import BulkCreateLinks, BulkCreateResponse
from shortlink.links.platforms import Platform
from shortlink.links.schema import CreateLink, DeletedLink, Link, LinkFilter, LinkListResponse, UpdateLink
from shortlink.mcp.schemas import object_schema
from shortlink.wiring import Services

log = logging.getLogger("shortlink")

INSTRUCTIONS = (
    "Tools of a self-hosted short-link service: create short links that open the right app on phones, "
    "list, change and delete them, read their click analytics, render QR codes and connect the account's own domains."
)

LinkId = Annotated[str, Meta(description="The link's id, lnk_…, as create_link and list_links return it")]


class NoArguments(msgspec.Struct, forbid_unknown_fields=True):
    pass


class LinkArguments(msgspec.Struct, forbid_unknown_fields=True):
    id: LinkId


class UpdateLinkArguments(UpdateLink, kw_only=True):
    id: LinkId


class ListLinksArguments(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """GET /links's query parameters."""

    page: Annotated[int, Meta(ge=1)] = 1
    limit: Annotated[int, Meta(ge=1, le=100)] = 20
    search: Annotated[str | None, Meta(description="Case-insensitive substring of destination, title or code")] = None
    platform: Platform | None = None
    is_active: Annotated[bool | None, Meta(description="true: active links only; false: paused ones only")] = None
    short_code: Annotated[str | None, Meta(description="Exact short code")] = None


class RangeArguments(msgspec.Struct, rename={"start": "from", "end": "to"}, forbid_unknown_fields=True, kw_only=True):
    """The analytics endpoints' range parameters, read by the same rules."""

    days: Annotated[int, Meta(ge=1, le=MAX_DAYS, description="Look back this many days; ignored when from is set")] = (
        DEFAULT_DAYS
    )
    start: Annotated[
        str | None, Meta(description="Range start: YYYY-MM-DD (00:00 UTC) or an ISO 8601 date-time; no offset is UTC")
    ] = None
    end: Annotated[
        str | None, Meta(description="Range end: YYYY-MM-DD (that whole UTC day) or an ISO 8601 date-time; default now")
    ] = None


class LinkRangeArguments(RangeArguments, kw_only=True):
    id: LinkId


class QrArguments(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """GET /links/{id}/qr's parameters; PNG by default, the form assistants can show."""

    id: LinkId
    format: qr.Format = "png"
    size: Annotated[int, Meta(ge=qr.MIN_SIZE, le=qr.MAX_SIZE, description="Width and height in pixels")] = (
        qr.DEFAULT_SIZE
    )
    color: Annotated[str, Meta(pattern=qr.HEX_COLOR_PATTERN, description="Dark modules: #rgb or #rrggbb")] = "#000000"
    bg_color: Annotated[str, Meta(pattern=qr.HEX_COLOR_PATTERN, description="Background, clearly lighter")] = "#ffffff"
    margin: Annotated[int, Meta(ge=qr.MIN_MARGIN, le=qr.MAX_MARGIN, description="Quiet zone in modules")] = (
        qr.DEFAULT_MARGIN
    )
    error_correction: qr.ErrorCorrection = "M"


class QrCode(msgspec.Struct, rename="camel"):
    id: str
    short_url: str
    format: qr.Format
    media_type: str
    size: int


@dataclass(frozen=True)
class ToolResult:
    data: msgspec.Struct  # the structured content: what the API answers as `data`
    summary: str  # a line or a few for the assistant to read
    content: list[types.ContentBlock] = field(default_factory=list)  # more blocks, e.g. the QR image


Run = Callable[[Services, Principal, Any], Awaitable[ToolResult]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[msgspec.Struct]
    result: type[msgspec.Struct]
    annotations: types.ToolAnnotations
    run: Run

    def listing(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=object_schema(self.arguments),
            output_schema=object_schema(self.result),
            annotations=self.annotations,
        )


TOOLS: dict[str, Tool] = {}


def tool(
    name: str,
    description: str,
    arguments: type[msgspec.Struct],
    result: type[msgspec.Struct],
    *,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
) -> Callable[[Run], Run]:
    def register(run: Run) -> Run:
        hints = types.ToolAnnotations(
            read_only_hint=read_only, destructive_hint=destructive, idempotent_hint=read_only or idempotent
        )
        TOOLS[name] = Tool(name, description, arguments, result, hints, run)
        return run

    return register


def _link_line(link: Link) -> str:
    state = "active" if link.is_active else "paused"
    platform = link.platform.value if link.platform else "no platform"
    return f"{link.short_url} → {link.original_url} ({platform}, {link.click_count} clicks, {state}, id {link.id})"


@tool("whoami", "The account, API key, subscription and rate limits of this key.", NoArguments, Me, read_only=True)
async def whoami(services: Services, principal: Principal, _: NoArguments) -> ToolResult:
    me = await services.accounts.me(principal, services.links.created_today(principal.account_id))
    limits = me.rate_limits
    return ToolResult(
        me,
        f"{me.user.email}, key {me.key.prefix}…, subscription {'active' if me.subscription.is_active else 'inactive'}; "
        f"{limits.remaining} of {limits.requests_per_minute} requests left this minute, "
        f"{limits.links_created_today} of {limits.links_per_day} links created today.",
    )


@tool(
    "create_link",
    "Create a short link. The platform (YOUTUBE, INSTAGRAM, …) is detected from originalUrl and decides which app "
    "opens on phones. Without a title, the destination page's title is fetched shortly after.",
    CreateLink,
    Link,
)
async def create_link(services: Services, principal: Principal, arguments: CreateLink) -> ToolResult:
    link = await services.links.create(principal.account_id, arguments, source="MCP")
    return ToolResult(link, f"Created {_link_line(link)}.")


@tool(
    "create_links",
    "Create up to 100 short links in one call: `links` holds create_link's arguments for each. Each link is "
    "created on its own, in order; the result at its index has status 201 and the link, or the error that "
    "create_link would have given (one bad item fails only itself).",
    BulkCreateLinks,
    BulkCreateResponse,
)
async def create_links(services: Services, principal: Principal, arguments: BulkCreateLinks) -> ToolResult:
    results = await services.links.create_many(principal.account_id, arguments.links, source="MCP")
    lines = [
        f"{result.index}: {_link_line(result.data) if result.data else result.error.message if result.error else ''}"
        for result in results
    ]
    created = sum(result.status == 201 for result in results)
    return ToolResult(BulkCreateResponse(results), "\n".join([f"Created {created} of {len(results)} links.", *lines]))


@tool(
    "list_links",
    "The account's links, newest first, a page at a time, with filters.",
    ListLinksArguments,
    LinkListResponse,
    read_only=True,
)
async def list_links(services: Services, principal: Principal, arguments: ListLinksArguments) -> ToolResult:
    query = LinkFilter(**msgspec.structs.asdict(arguments))
    links, pagination = await services.links.list(principal.account_id, query)
    head = f"{pagination.total} links; page {pagination.page} of {max(pagination.pages, 1)}"
    return ToolResult(
        LinkListResponse(links, pagination), "\n- ".join([head + ":" if links else head, *map(_link_line, links)])
    )


@tool("get_link", "One link of the account by its id.", LinkArguments, Link, read_only=True)
async def get_link(services: Services, principal: Principal, arguments: LinkArguments) -> ToolResult:
    link = await services.links.get(principal.account_id, arguments.id)
    return ToolResult(link, _link_line(link))


@tool(
    "update_link",
    "Change a link's title, pause or resume it (isActive), set or remove (null) its expiry or password. The "
    "destination and the short code cannot change. Overwrites the fields given.",
    UpdateLinkArguments,
    Link,
    destructive=True,
    idempotent=True,
)
async def update_link(services: Services, principal: Principal, arguments: UpdateLinkArguments) -> ToolResult:
    link = await services.links.update(principal.account_id, arguments.id, arguments)
    return ToolResult(link, f"Updated {_link_line(link)}.")


@tool(
    "delete_link",
    "Permanently delete a link and its whole click history; its short URL stops working. "
    "To stop a link but keep its analytics, use update_link with isActive false instead.",
    LinkArguments,
    DeletedLink,
    destructive=True,
    idempotent=True,
)
async def delete_link(services: Services, principal: Principal, arguments: LinkArguments) -> ToolResult:
    await services.links.delete(principal.account_id, arguments.id)
    return ToolResult(DeletedLink(id=arguments.id, deleted=True), f"Deleted {arguments.id} and its click history.")


def _figures_line(figures: AnalyticsFigures) -> str:
    top = ", ".join(f"{item.country} {item.clicks}" for item in figures.country_breakdown[:3]) or "none"
    return (
        f"{figures.clicks_in_period} clicks from {figures.range.start} to {figures.range.end} "
        f"({figures.unique_visitors} unique visitors; top countries: {top}); {figures.total_clicks} all time. "
        "Bots and link previews are not counted."
    )


@tool(
    "get_link_analytics",
    "Click analytics of one link over a range (default the last 30 days): totals, breakdowns by device, browser, "
    "OS, country, referrer and campaign, clicks by day and by hour, recent clicks.",
    LinkRangeArguments,
    LinkAnalytics,
    read_only=True,
)
async def get_link_analytics(services: Services, principal: Principal, arguments: LinkRangeArguments) -> ToolResult:
    report = await services.analytics.of_link(
        principal.account_id, arguments.id, str(arguments.days), arguments.start, arguments.end
    )
    return ToolResult(report, f"{report.url.short_code}: {_figures_line(report)}")


@tool(
    "get_account_analytics",
    "Click analytics of all the account's links over a range (default the last 30 days), with the top links.",
    RangeArguments,
    AccountAnalytics,
    read_only=True,
)
async def get_account_analytics(services: Services, principal: Principal, arguments: RangeArguments) -> ToolResult:
    report = await services.analytics.of_account(
        principal.account_id, str(arguments.days), arguments.start, arguments.end
    )
    top = ", ".join(f"{url.short_code} {url.clicks}" for url in report.top_urls[:5]) or "none"
    return ToolResult(report, f"{report.total_urls} links: {_figures_line(report)} Top links: {top}.")


@tool(
    "get_qr_code",
    "A QR code of a link's short URL: a PNG image (default) or SVG text, with the short URL.",
    QrArguments,
    QrCode,
    read_only=True,
)
async def get_qr_code(services: Services, principal: Principal, arguments: QrArguments) -> ToolResult:
    options = qr.make_options(
        format=arguments.format,
        size=arguments.size,
        color=arguments.color,
        bg_color=arguments.bg_color,
        margin=arguments.margin,
        error_correction=arguments.error_correction,
    )
    link = await services.links.get(principal.account_id, arguments.id)
    image = await services.links.qr_code(principal.account_id, arguments.id, options)
    code = QrCode(
        id=link.id, short_url=link.short_url, format=options.format, media_type=image.media_type, size=options.size
    )
    if options.format == "png":
        block: types.ContentBlock = types.ImageContent(
            type="image", data=base64.b64encode(image.content).decode(), mime_type=image.media_type
        )
    else:
        block = types.TextContent(type="text", text=image.content.decode())
    return ToolResult(code, f"QR code ({options.format.upper()}, {options.size} px) of {link.short_url}", [block])


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def failure(code: ErrorCode, message: str) -> types.CallToolResult:
    """A tool error the assistant can read: the API's code and message, as text and structured."""
    return types.CallToolResult(
        content=[_text(f"{code}: {message}")],
        structured_content={"error": {"code": code, "message": message}},
        is_error=True,
    )


def decode(arguments_type: type[msgspec.Struct], arguments: dict[str, Any] | None) -> Any:
    try:
        return msgspec.convert(arguments or {}, arguments_type, strict=True)
    except msgspec.ValidationError as exc:
        raise field_error(str(exc), "arguments") from None


PrincipalOf = Callable[[ServerRequestContext], Principal]


async def call(
    services: Services, principal_of: PrincipalOf, ctx: ServerRequestContext, tool: Tool, arguments: Any
) -> types.CallToolResult:
    """One tool call: who, one request of the budget, the arguments, the operation."""
    try:
        principal = principal_of(ctx)
        await services.accounts.charge(principal)
        outcome = await tool.run(services, principal, decode(tool.arguments, arguments))
    except ShortlinkError as exc:
        return failure(exc.code, exc.message)
    except Exception:  # an assistant gets a tool error, never a broken connection
        log.exception("MCP tool %s failed", tool.name)
        return failure("INTERNAL", "Unexpected server error; it has been logged")
    return types.CallToolResult(
        content=[_text(outcome.summary), *outcome.content], structured_content=msgspec.to_builtins(outcome.data)
    )


@functools.cache
def tool_listings() -> list[types.Tool]:
    """The tools as MCP lists them, built once per process: their schemas never change, and
    building them is a tenth of a second that every new app would pay again."""
    return [tool.listing() for tool in TOOLS.values()]


def build_server(services: Services, principal_of: PrincipalOf) -> Server:
    """The MCP server of the tools. `principal_of(ctx)` tells who a tool call acts for
    (raising UNAUTHORIZED or SUBSCRIPTION_REQUIRED); each transport has its own way."""
    listing = tool_listings()
    input_schemas = {item.name: item.input_schema for item in listing}

    async def list_tools(_ctx: ServerRequestContext, _params: types.PaginatedRequestParams | None):
        return types.ListToolsResult(tools=listing)

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = TOOLS.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        return await call(services, principal_of, ctx, tool, params.arguments)

    return Server(
        "shortlink",
        version=importlib.metadata.version("shortlink"),
        instructions=INSTRUCTIONS,
        get_tool_input_schema=input_schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
