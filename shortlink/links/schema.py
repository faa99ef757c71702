"""The link resources of the API, exactly as the spec names them."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, get_args

import msgspec
from msgspec import UNSET, Meta, UnsetType

from shortlink.links.platforms import Platform
from shortlink.times import Timestamp

# Litestar puts extra_json_schema["extra"] into the OpenAPI document. The URL
# pattern is for the document only; rules.validate_url checks (and explains) more.
Url = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=2048,
        description="http or https URL",
        extra_json_schema={"extra": {"format": "uri", "pattern": r"^[Hh][Tt][Tt][Pp][Ss]?://\S+$"}},
    ),
]
Title = Annotated[str, Meta(min_length=1, max_length=200)]
Description = Annotated[str, Meta(min_length=1, max_length=500)]
Password = Annotated[str, Meta(min_length=4, max_length=64, description="Write-only")]
Code = Annotated[str, Meta(min_length=3, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")]
DateTime = Annotated[
    str,
    Meta(
        description="ISO 8601 date-time with offset, in the future",
        extra_json_schema={"extra": {"format": "date-time"}},
    ),
]
UrlText = Annotated[str, Meta(extra_json_schema={"extra": {"format": "uri"}})]
# Where a link was made. This service makes API links, and demo links without a source.
Source = Literal["DASHBOARD", "API", "MCP", "PUBLIC", "BIO"]


class Link(msgspec.Struct, rename="camel"):
    id: str
    short_code: str
    short_url: UrlText
    original_url: UrlText
    platform: Platform | None
    title: str | None
    description: str | None
    og_image: UrlText | None
    ios_url: UrlText | None
    android_url: UrlText | None
    is_active: bool
    is_password_protected: bool
    expires_at: Timestamp | None
    click_count: int
    source: Source | None
    created_at: Timestamp
    updated_at: Timestamp


class CreateLink(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    original_url: Url
    custom_code: Code | None = None
    title: Title | None = None
    description: Description | None = None
    ios_url: Url | None = None
    android_url: Url | None = None
    password: Password | None = None
    expires_at: DateTime | None = None


class UpdateLink(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """Any subset, at least one field. null removes the expiry or the password."""

    min_fields: ClassVar[int] = 1  # read by the OpenAPI document: minProperties
    title: Title | UnsetType = UNSET
    is_active: bool | UnsetType = UNSET
    expires_at: DateTime | UnsetType | None = UNSET
    password: Password | UnsetType | None = UNSET


class Pagination(msgspec.Struct):
    page: int
    limit: int
    total: int
    pages: int


class LinkResponse(msgspec.Struct):
    data: Link


class LinkListResponse(msgspec.Struct):
    data: list[Link]
    pagination: Pagination


class DeletedLink(msgspec.Struct):
    id: str
    # Always true; msgspec has no Literal[True], so the document is told directly.
    deleted: Annotated[bool, Meta(extra_json_schema={"extra": {"const": True}})]


class DeletedLinkResponse(msgspec.Struct):
    data: DeletedLink


# The orders a list can be in: a column, "-" first for the largest (or newest) first.
LinkSort = Literal["-created", "created", "-clicks", "clicks", "-code", "code"]
LINK_SORTS: tuple[str, ...] = get_args(LinkSort)


class LinkFilter(msgspec.Struct, frozen=True, kw_only=True):
    page: int = 1
    limit: int = 20
    search: str | None = None
    short_code: str | None = None
    platform: Platform | None = None
    is_active: bool | None = None
    source: Source | None = None  # not an API filter; the dashboard and CLI use it
    tag: str | None = None  # an extension of the API's filters
    sort: LinkSort = "-created"  # not an API parameter; the dashboard sorts its list
