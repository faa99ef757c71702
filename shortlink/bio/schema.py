"""What the bio editor reads and sends (msgspec Structs, camelCase like the API)."""

from __future__ import annotations

import msgspec

from shortlink.times import Day, Timestamp


class SavePage(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    handle: str
    title: str
    description: str = ""
    is_published: bool = False


class BioButton(msgspec.Struct, rename="camel"):
    link_id: str  # the link's public id (lnk_…)
    short_code: str
    short_url: str
    label: str  # what the button says: its own label, else the link's title, else its host
    custom_label: str | None
    is_hidden: bool
    is_shown: bool  # on the public page now: not hidden, the link active and not expired


class BioPage(msgspec.Struct, rename="camel"):
    handle: str
    title: str
    description: str
    is_published: bool
    url: str  # the public page: <base>/@<handle>
    buttons: list[BioButton]
    created_at: Timestamp
    updated_at: Timestamp


class DayViews(msgspec.Struct):
    day: Day
    views: int


class ButtonClicks(msgspec.Struct, rename="camel"):
    link_id: str
    short_code: str
    label: str
    clicks: int  # human clicks that came through the page (referrer "<host>/@<handle>")


class BioStats(msgspec.Struct, rename="camel"):
    views_by_day: list[DayViews]  # one item per UTC day of the range, zeros included
    total_views: int
    buttons: list[ButtonClicks]  # in the page's order
