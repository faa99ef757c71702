"""Bulk requests on links: extensions beside the spec's resources, in the OpenAPI
document. Each item gets its own result with the status and the spec's error its single
request would have given; one bad item never fails the others."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from shortlink.errors import ValidationError
from shortlink.links.schema import Link
from shortlink.links.tags import TagInput

MAX_BULK_LINKS = 100
MAX_BULK_IDS = 1000
Action = Literal["pause", "resume", "delete", "tag", "untag"]


class BulkCreateLinks(msgspec.Struct, forbid_unknown_fields=True):
    """Each item is a CreateLink body, checked on its own: one bad item fails only itself."""

    links: Annotated[list[dict[str, Any]], Meta(min_length=1, max_length=MAX_BULK_LINKS)]


class BulkLinkAction(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """`pause`, `resume` or `delete` the links `ids`; `tag` adds `tags` to each (a colour
    given changes the name's colour), `untag` removes the tags named."""

    action: Action
    ids: Annotated[list[str], Meta(min_length=1, max_length=MAX_BULK_IDS)]
    tags: Annotated[list[TagInput], Meta(min_length=1)] | None = None


class ItemError(msgspec.Struct):
    """The spec's error object, for one item of a bulk request."""

    code: str
    message: str


class BulkItemResult(msgspec.Struct, omit_defaults=True):
    """`status` is what the single request would have answered: 201 with `data`, or the
    error's status with `error`."""

    index: int
    status: int
    data: Link | None = None
    error: ItemError | None = None


class BulkCreateResponse(msgspec.Struct):
    data: list[BulkItemResult]


class BulkActionResult(msgspec.Struct, omit_defaults=True):
    index: int
    id: str
    status: int  # 200 done, else the error's status
    error: ItemError | None = None


class BulkActionResponse(msgspec.Struct):
    data: list[BulkActionResult]


def check_action(body: BulkLinkAction) -> None:
    """`tags` goes with `tag` and `untag`, and only with them."""
    wants_tags = body.action in ("tag", "untag")
    if wants_tags and body.tags is None:
        raise ValidationError("tags", f"is required for {body.action}")
    if not wants_tags and body.tags is not None:
        raise ValidationError("tags", f"cannot be sent with {body.action}")
