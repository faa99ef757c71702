"""The /domains resource's shapes."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

Url = Annotated[str, Meta(min_length=1, max_length=2048)]
Name = Annotated[str, Meta(min_length=1, max_length=253)]


class CreateDomain(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    name: Name
    root_redirect: Url | None = None
    not_found_redirect: Url | None = None


class UpdateDomain(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """What `/` and an unknown code do on the domain; null: the usual answer (the dashboard,
    the not-found page); left out: unchanged."""

    root_redirect: Url | msgspec.UnsetType | None = msgspec.UNSET
    not_found_redirect: Url | msgspec.UnsetType | None = msgspec.UNSET


class Verification(msgspec.Struct, kw_only=True):
    """The DNS record that proves the account holds the name."""

    type: str
    name: str
    value: str


class Domain(msgspec.Struct, rename="camel", kw_only=True):
    id: str
    name: str
    verified: bool
    # null for a domain the operator connected (`shortlink domain add`): it needs no record.
    verification: Verification | None
    root_redirect: str | None
    not_found_redirect: str | None
    created_at: str
    verified_at: str | None
    checked_at: str | None
    # Why the last check did not find the record; null when it did, or before any check.
    check_error: str | None


class DomainResponse(msgspec.Struct):
    data: Domain


class DomainListResponse(msgspec.Struct):
    data: list[Domain]


class DeletedDomain(msgspec.Struct, kw_only=True):
    id: str
    deleted: bool


class DeletedDomainResponse(msgspec.Struct):
    data: DeletedDomain
