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


class SimulatedVisit(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, rename="camel"):
    """A visitor for the tester: what a request would carry. Nothing is recorded."""

    user_agent: Annotated[str, Meta(max_length=512)] = ""
    country: Annotated[str | None, Meta(description="ISO 3166-1 alpha-2; none: unknown")] = None
    accept_language: Annotated[str, Meta(max_length=512)] = ""
    query: Annotated[str, Meta(max_length=2048, description="the short URL's query string, without '?'")] = ""
    referrer: Annotated[str, Meta(max_length=2048)] = ""
    time: Annotated[str | None, Meta(description="ISO 8601 with offset; none: now")] = None


class SimulatedResult(msgspec.Struct, kw_only=True, rename="camel"):
    rule: int | None  # the index of the rule that matched, None: the link's own destination
    variant: int | None  # the split's variant, None: no split
    status: int  # the HTTP status the visitor would get
    location: str | None  # where the visitor is sent (a redirect's target, a page's website link)
    page: str | None  # None for a redirect; else ios | store | in_app | paused | expired | notYet | capped | password
    app_url: str | None = None  # the app URL a page offers


class SimulatedResponse(msgspec.Struct):
    data: SimulatedResult


class RuleDay(msgspec.Struct, rename="camel"):
    date: str
    clicks: int
    unique_visitors: int


class RuleStats(msgspec.Struct, rename="camel"):
    rule: int
    variant: int | None
    clicks: int
    unique_visitors: int  # summed over days: a visitor is known within a day only
    days: list[RuleDay]


class RuleAnalytics(msgspec.Struct, rename="camel"):
    link_id: str
    start: str = msgspec.field(name="from")
    end: str = msgspec.field(name="to")
    rules: list[RuleStats] = msgspec.field(default_factory=list)


class RuleAnalyticsResponse(msgspec.Struct):
    data: RuleAnalytics


DOORS = ("api", "dashboard", "mcp", "cli")


class DestinationInput(msgspec.Struct, forbid_unknown_fields=True):
    """What `PUT /links/{id}/destination` takes: the address everyone is sent to from now on."""

    url: str


class DestinationChange(msgspec.Struct):
    at: str
    url: Annotated[str, Meta(description="where visitors went from then on (the originalUrl when sent back)")]
    door: Annotated[str, Meta(description="how the change was made: " + " | ".join(DOORS))]


class Destination(msgspec.Struct, rename="camel"):
    """Where visitors of a link go now, since when, and every change: the spec's originalUrl stays
    the record of what the link was created for (docs/link-rules.md, "Where a link goes")."""

    url: str
    since: str
    original_url: str
    history: list[DestinationChange] = msgspec.field(default_factory=list)


class DestinationResponse(msgspec.Struct):
    data: Destination
