"""Tags on links: names with a colour, an extension beside the spec's objects.

A link's tags are read and replaced through their own resource (`/links/{id}/tags`): the
spec's Link object stays exactly as written. A name has one colour in an account: a tag
given without a colour takes the one the account already uses for that name.
"""

from __future__ import annotations

import re
from typing import Annotated

import msgspec
from msgspec import Meta

from shortlink.errors import ValidationError
from shortlink.links import service, validation
from shortlink.links.schema import Link, LinkFilter, Pagination
from shortlink.storage import Connection
from shortlink.storage import tags as store

MAX_TAGS_PER_LINK = 20
MAX_NAME_LENGTH = 40
DEFAULT_COLOUR = "#64748b"
COLOUR_PATTERN = r"^#[0-9a-fA-F]{6}$"
# Characters that separate tags in the generic CSV's `tags` column, hence not in a name.
SEPARATORS = ";,"

TagName = Annotated[str, Meta(min_length=1, max_length=MAX_NAME_LENGTH)]
Colour = Annotated[str, Meta(pattern=COLOUR_PATTERN, description="#rrggbb")]


class Tag(msgspec.Struct, frozen=True):
    name: str
    colour: str


class TagInput(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    name: TagName
    colour: Colour | None = None


class SetTags(msgspec.Struct, forbid_unknown_fields=True):
    """The whole set of the link's tags (an empty list removes them all)."""

    tags: Annotated[list[TagInput], Meta(max_length=MAX_TAGS_PER_LINK)]


class LinkTags(msgspec.Struct, rename="camel"):
    link_id: str
    tags: list[Tag]


class LinkTagsResponse(msgspec.Struct):
    data: LinkTags


def validate_name(name: str) -> str:
    """A tag name, trimmed: 1-40 visible characters, none of the CSV's separators."""
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        raise ValidationError("tags", f"a tag name must be 1-{MAX_NAME_LENGTH} characters")
    validation.refuse_invisible_characters("tags", name)
    if any(separator in name for separator in SEPARATORS):
        raise ValidationError("tags", f"a tag name must not contain {' or '.join(SEPARATORS)}")
    if re.search(r"#[0-9a-fA-F]{6}$", name):
        raise ValidationError(
            "tags", "a tag name must not end in a colour (#rrggbb): the CSV's tags column reads it so"
        )
    return name


def validate_colour(colour: str) -> str:
    if not re.fullmatch(COLOUR_PATTERN, colour):
        raise ValidationError("tags", f"colour {colour!r} must be #rrggbb")
    return colour.lower()


def validated(tags: list[TagInput]) -> list[TagInput]:
    """Names trimmed and checked, colours checked; a name given twice is refused."""
    if len(tags) > MAX_TAGS_PER_LINK:
        raise ValidationError("tags", f"at most {MAX_TAGS_PER_LINK} tags per link")
    seen: set[str] = set()
    checked = []
    for tag in tags:
        name = validate_name(tag.name)
        if name in seen:
            raise ValidationError("tags", f"tag {name!r} is given twice")
        seen.add(name)
        checked.append(TagInput(name=name, colour=None if tag.colour is None else validate_colour(tag.colour)))
    return checked


def link_tags(conn: Connection, account_id: int, link_id: str) -> LinkTags:
    row = service.owned_row(conn, account_id, link_id)
    pairs = store.tags_of_links(conn, [row["id"]]).get(row["id"], [])
    return LinkTags(link_id=link_id, tags=[Tag(name, colour) for name, colour in pairs])


def set_link_tags(conn: Connection, account_id: int, link_id: str, tags: list[TagInput]) -> LinkTags:
    """Replace the link's tags; returns them as stored."""
    row = service.owned_row(conn, account_id, link_id)
    store_tags(conn, account_id, row["id"], validated(tags))
    return link_tags(conn, account_id, link_id)


def store_tags(conn: Connection, account_id: int, link_pk: int, tags: list[TagInput]) -> None:
    """Tags already `validated`, on the link whose primary key is `link_pk`; a missing colour is
    the account's for that name, else the default."""
    known = store.colours_of(conn, account_id, [tag.name for tag in tags if tag.colour is None])
    pairs = [(tag.name, tag.colour or known.get(tag.name, DEFAULT_COLOUR)) for tag in tags]
    store.replace_link_tags(conn, account_id, link_pk, pairs)


def add_link_tags(conn: Connection, account_id: int, link_id: str, tags: list[TagInput]) -> LinkTags:
    """The link keeps its tags and gains these (a colour given replaces the name's)."""
    given = {tag.name.strip(): tag for tag in tags}
    kept = [TagInput(name=tag.name, colour=tag.colour) for tag in link_tags(conn, account_id, link_id).tags]
    merged = [given.pop(tag.name, tag) for tag in kept] + list(given.values())
    return set_link_tags(conn, account_id, link_id, merged)


def remove_link_tags(conn: Connection, account_id: int, link_id: str, names: list[str]) -> LinkTags:
    gone = {name.strip() for name in names}
    kept = [TagInput(name=tag.name, colour=tag.colour) for tag in link_tags(conn, account_id, link_id).tags]
    return set_link_tags(conn, account_id, link_id, [tag for tag in kept if tag.name not in gone])


def list_links_with_tags(
    conn: Connection, account_id: int, query: LinkFilter, base: str
) -> tuple[list[Link], Pagination, dict[str, list[Tag]]]:
    """A page of `service.list_links` and, by link id, the tags of each link on it (one more read)."""
    rows, pagination = service.list_link_rows(conn, account_id, query)
    pairs = store.tags_of_links(conn, [row["id"] for row in rows])
    tags = {row["public_id"]: [Tag(name, colour) for name, colour in pairs.get(row["id"], [])] for row in rows}
    return [service.to_link(row, base) for row in rows], pagination, tags


def account_tags(conn: Connection, account_id: int) -> list[Tag]:
    """The tags in use in the account (the dashboard's tag filter)."""
    return [Tag(name, colour) for name, colour in store.tags_of_account(conn, account_id)]
