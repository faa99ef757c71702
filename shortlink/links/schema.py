"""The link resources of the API, exactly as the spec names them."""
from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType

from shortlink.links.platforms import Platform

# Litestar puts extra_json_schema["extra"] into the OpenAPI document. The URL
# pattern is for the document only; rules.validate_url checks (and explains) more.
Url = Annotated[str, Meta(min_length=1, max_length=2048, description="http or https URL",
                          extra_json_schema={"extra": {"format": "uri",
                                                       "pattern": r"^[Hh][Tt][Tt][Pp][Ss]?://\S+$"}})]
Title = Annotated[str, Meta(min_length=1, max_length=200)]
Password = Annotated[str, Meta(min_length=4, max_length=64, description="Write-only")]
Code = Annotated[str, Meta(min_length=3, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")]
DateTime = Annotated[str, Meta(description="ISO 8601 date-time with offset, in the future",
                               extra_json_schema={"extra": {"format": "date-time"}})]


class Link(msgspec.Struct, rename="camel"):
    id: str
    short_code: str
    short_url: str
    original_url: str
    platform: Platform | None
    title: str | None
    description: str | None
    og_image: str | None
    ios_url: str | None
    android_url: str | None
    is_active: bool
    is_password_protected: bool
    expires_at: str | None
    click_count: int
    source: str | None
    created_at: str
    updated_at: str


class CreateLink(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    original_url: Url
    custom_code: Code | None = None
    title: Title | None = None
    ios_url: Url | None = None
    android_url: Url | None = None
    password: Password | None = None
    expires_at: DateTime | None = None


class UpdateLink(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """Any subset, at least one field. null removes the expiry or the password."""
    title: Title | UnsetType = UNSET
    is_active: bool | UnsetType = UNSET
    expires_at: DateTime | None | UnsetType = UNSET
    password: Password | None | UnsetType = UNSET


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
    deleted: bool


class DeletedLinkResponse(msgspec.Struct):
    data: DeletedLink


class LinkFilter(msgspec.Struct, frozen=True, kw_only=True):
    page: int = 1
    limit: int = 20
    search: str | None = None
    short_code: str | None = None
    platform: Platform | None = None
    is_active: bool | None = None
