"""The link-rules document: what `PUT /links/{id}/rules` takes and `GET` returns.

`{"rules": [RULE, ...], "startsAt": ..., "maxClicks": ..., "fallbackUrl": ...}`; a RULE has
`conditions` (all must hold) and exactly one action: `url`, `split` or `rewrite`.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

MAX_RULES = 50
MAX_CONDITIONS = 20
MAX_VALUES = 300  # a country condition may list every country
MIN_VARIANTS, MAX_VARIANTS = 2, 10


class Condition(msgspec.Struct, forbid_unknown_fields=True):
    type: Annotated[str, Meta(description="device | os | inApp | country | language | query | time | referrerHost")]
    values: list[str]


class Variant(msgspec.Struct, forbid_unknown_fields=True):
    url: str
    weight: Annotated[int, Meta(description="1-99; the weights of a split sum to 100")]


class Rewrite(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The destination's host replaced by the visitor's country: the shipped `table`
    ("amazon") and/or the owner's own `hosts` map (country code → host), which wins."""

    table: str | None = None
    hosts: dict[str, str] | None = None


class Rule(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    conditions: list[Condition] = msgspec.field(default_factory=list)
    url: str | None = None
    split: list[Variant] | None = None
    rewrite: Rewrite | None = None


class RulesDocument(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, rename="camel"):
    rules: Annotated[list[Rule], Meta(description=f"ordered, first match wins; at most {MAX_RULES}")] = msgspec.field(
        default_factory=list
    )
    starts_at: Annotated[str | None, Meta(description="ISO 8601 with offset; before it a 'not yet' page")] = None
    max_clicks: Annotated[int | None, Meta(description="human clicks after which the link is capped")] = None
    fallback_url: Annotated[
        str | None, Meta(description="shown instead of the expired, paused, capped or not-yet page")
    ] = None


class RulesResponse(msgspec.Struct):
    data: RulesDocument
