"""Form fields → the API's request Structs, so that every rule and message is the API's.

Field names are the API's (originalUrl, customCode, …): a ValidationError names the
field, and the page shows its message beside the input of the same name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from shortlink.bio.schema import SavePage
from shortlink.errors import field_error
from shortlink.links.schema import CreateLink, Link, UpdateLink
from shortlink.links.tags import Tag, TagInput

BIO_PAGE_FIELDS = ("handle", "title", "description")
CREATE_FIELDS = ("originalUrl", "customCode", "title", "description", "iosUrl", "androidUrl", "password", "expiresAt")
# <input type="datetime-local"> sends no offset; the form says the time is UTC.
_LOCAL_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2})?")


def text(form: Mapping[str, Any], name: str) -> str:
    value = form.get(name, "")
    return value.strip() if isinstance(value, str) else ""


def expiry(value: str) -> str:
    return value + "Z" if _LOCAL_TIME.fullmatch(value) else value


def expiry_input(expires_at: str | None) -> str:
    """An expiry as the datetime-local input shows it (UTC, to the minute)."""
    return expires_at[:16] if expires_at else ""


def _convert(fields: dict[str, Any], type_: type) -> Any:
    try:
        return msgspec.convert(fields, type_)
    except msgspec.ValidationError as exc:
        raise field_error(str(exc)) from None


def create_link(form: Mapping[str, Any]) -> CreateLink:
    """The POST /links body these fields make; empty fields are left out."""
    fields: dict[str, Any] = {name: text(form, name) for name in CREATE_FIELDS if text(form, name)}
    fields.setdefault("originalUrl", "")
    if "expiresAt" in fields:
        fields["expiresAt"] = expiry(fields["expiresAt"])
    if "password" in fields:
        fields["password"] = str(form.get("password", ""))  # spaces are part of a password
    return _convert(fields, CreateLink)


def link_tags(form: Mapping[str, Any]) -> list[TagInput]:
    """The tags field: names separated by commas (which no name may hold), blanks left out;
    unchecked (`Links.checked_tags`)."""
    names = [name.strip() for name in text(form, "tags").split(",")]
    return [TagInput(name=name) for name in names if name]


def changed_tags(typed: list[TagInput] | None, tags: list[Tag]) -> list[TagInput] | None:
    """The checked tags of the edit form's field (None: the form has no such field), or None
    when they are the tags the link has (in any order)."""
    if typed is None:
        return None
    return None if sorted(tag.name for tag in typed) == sorted(tag.name for tag in tags) else typed


def update_link(form: Mapping[str, Any], link: Link) -> UpdateLink | None:
    """The PATCH body for what the edit form changed (None when nothing did)."""
    fields: dict[str, Any] = {}
    title = text(form, "title")
    if title and title != (link.title or ""):
        fields["title"] = title
    expires = text(form, "expiresAt")
    if expires != expiry_input(link.expires_at):
        fields["expiresAt"] = expiry(expires) if expires else None
    if form.get("removePassword") and link.is_password_protected:
        fields["password"] = None
    elif form.get("password"):
        fields["password"] = str(form.get("password"))
    if not fields:
        return None
    patch = _convert(fields, UpdateLink)
    return patch if any(getattr(patch, name) is not UNSET for name in patch.__struct_fields__) else None


def save_bio_page(form: Mapping[str, Any]) -> SavePage:
    """The bio page these fields make; the checkbox is sent only when ticked."""
    fields: dict[str, Any] = {name: text(form, name) for name in BIO_PAGE_FIELDS}
    return _convert({**fields, "isPublished": bool(form.get("isPublished"))}, SavePage)
