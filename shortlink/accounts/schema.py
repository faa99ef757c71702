"""Accounts and API keys as the API, the CLI and the dashboard show them."""

from __future__ import annotations

import msgspec


class CreatedKey(msgspec.Struct, rename="camel"):
    key: str
    key_id: str
    user_id: str
    email: str


class AccountOverview(msgspec.Struct, frozen=True):
    """An account as its owner sees it on the dashboard's account page."""

    email: str
    name: str | None
    created_at: str
    subscription_active: bool
    current_period_end: str | None
    cancel_at_period_end: bool
    domains: list[str]


class AccountSummary(msgspec.Struct, rename="camel"):
    id: str
    email: str
    name: str | None
    subscription_active: bool
    active_keys: int
    links: int
    created_at: str


class KeySummary(msgspec.Struct, rename="camel"):
    id: str
    prefix: str
    name: str | None
    created_at: str
    revoked_at: str | None
    last_used_at: str | None = None


class Principal(msgspec.Struct, frozen=True):
    """Who an API request acts for."""

    account_id: int
    account_public_id: str
    email: str
    name: str | None
    key_id: int
    key_public_id: str
    key_prefix: str
    subscription_active: bool
    current_period_end: str | None
    cancel_at_period_end: bool
    key_last_used_at: str | None = None


class SessionAccount(msgspec.Struct, frozen=True):
    """Who a dashboard request acts for: the session and its account."""

    session_id: int
    token: str
    account_id: int
    account_public_id: str
    email: str
    name: str | None
    subscription_active: bool
    csrf: str
