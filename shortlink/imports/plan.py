"""What each row of an import becomes, decided reading only, over a connection.

Each row is checked by the rules every door uses (`links.service.check_new_link`, the tag
rules) and its code decided against the database and the rows before it: created (with the
code it asks for, or a suffixed one), unchanged (the account's link already), skipped or
refused. `application/imports.py` runs the plan, a chunk of rows per write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

from shortlink.errors import ValidationError
from shortlink.imports import Policy
from shortlink.imports.rows import BadRow, ImportRow
from shortlink.links import passwords as link_passwords
from shortlink.links import service, validation
from shortlink.links import tags as tagging
from shortlink.links.schema import CreateLink
from shortlink.storage import Connection, Row
from shortlink.storage import links as link_store
from shortlink.times import day_of, utcnow

Action = Literal["create", "unchanged", "skip", "error"]
# The suffixes tried for a taken code: code-2 ... code-99.
MAX_SUFFIX = 99


class RowOutcome(msgspec.Struct, omit_defaults=True):
    line: int
    action: Action
    code: str | None = None
    url: str | None = None
    reason: str | None = None  # why skipped or refused, or how the code changed
    visits: int = 0
    row: int = 0  # the row's place in a statement of many rows (a dump's INSERT): ImportRow.row
    clicks_left_out: int = 0  # the source's clicks of a row not created now: not imported


class Planned(msgspec.Struct):
    outcome: RowOutcome
    row: ImportRow | None = None
    tags: list[tagging.TagInput] = []
    conflict: bool = False
    file_code: str | None = None  # the row's code in the file, which its history names


class Known:
    """What the plan knows of codes: the database's, and those claimed by earlier rows."""

    def __init__(self, destinations: list[Row], account_id: int):
        self.account_id = account_id
        self.by_moment = {(row["original_url"], row["created_at"]): row["short_code"] for row in destinations}
        self.by_url = {row["original_url"]: row["short_code"] for row in destinations}
        self.claimed: dict[str, tuple[str, int]] = {}  # code -> (url, line)
        self.planned: dict[tuple[str, str | None], int] = {}  # (url, created_at) of rows without code -> line


def plan(
    conn: Connection,
    account_id: int,
    rows: list[ImportRow | BadRow],
    policy: Policy,
    is_ours: Callable[[str], bool],
    blocked: frozenset[str] = frozenset(),
    daily_limit: int | None = None,
) -> list[Planned]:
    """Each row's outcome, reading only. `blocked`: the hosts no link of any door leads to.
    `daily_limit`: the account's new links per day, which the rows to create count against
    (today's, whatever day each link was made at the source); None for the operator's import."""
    known = Known(link_store.destinations_of_account(conn, account_id), account_id)
    planned = [_plan_row(conn, row, policy, is_ours, known, blocked) for row in rows]
    if daily_limit is not None:
        room = daily_limit - link_store.links_created_on(conn, account_id, day_of(utcnow()))
        for item in planned:
            if item.outcome.action == "create":
                if room <= 0 and item.row is not None:
                    item.outcome.action, item.outcome.reason = "error", daily_limit_reached(daily_limit)
                    item.outcome.visits, item.outcome.clicks_left_out = 0, len(item.row.clicks)
                    item.row = None
                room -= 1
    return planned


def daily_limit_reached(daily_limit: int) -> str:
    """The spec's RATE_LIMITED message for the daily limit, as links.service words it."""
    return f"Daily limit of {daily_limit} new links reached; it resets at 00:00 UTC"


def _plan_row(
    conn: Connection,
    row: ImportRow | BadRow,
    policy: Policy,
    is_ours: Callable[[str], bool],
    known: Known,
    blocked: frozenset[str],
) -> Planned:
    if isinstance(row, BadRow):
        return Planned(RowOutcome(row.line, "error", reason=row.reason, row=row.row))
    planned = _plan_link(conn, row, policy, is_ours, known, blocked)
    planned.outcome.row, planned.file_code = row.row, row.code
    if planned.outcome.action != "create":  # its history stays behind: the report says so
        planned.outcome.clicks_left_out = len(row.clicks)
    return planned


def _plan_link(
    conn: Connection,
    row: ImportRow,
    policy: Policy,
    is_ours: Callable[[str], bool],
    known: Known,
    blocked: frozenset[str],
) -> Planned:
    refused = Planned(RowOutcome(row.line, "error", code=row.code, url=row.url))
    try:
        tags = tagging.validated([tagging.TagInput(name=name, colour=row.colours.get(name)) for name in row.tags])
        body, changes = new_link(row)
        service.check_new_link(body, is_ours, blocked)  # the destination, title... before the code
        if row.password_hash is not None:
            link_passwords.validate_password_hash(row.password_hash)
        code, note, conflict = _code_for(conn, row, policy, known)
        if conflict:
            return Planned(
                RowOutcome(row.line, "error" if policy == "fail" else "skip", row.code, row.url, note), conflict=True
            )
        if isinstance(code, _Existing):
            return Planned(RowOutcome(row.line, "unchanged", code.code or None, row.url, note))
        if code is not None:
            service.check_new_link(msgspec.structs.replace(body, custom_code=code), is_ours, blocked)
            known.claimed[code] = (row.url, row.line)
    except ValidationError as exc:
        refused.outcome.reason = exc.message
        return refused
    if row.code is None:
        known.planned[(row.url, row.created_at)] = row.line
        known.planned.setdefault((row.url, None), row.line)
    note = "; ".join([*([note] if note else []), *changes]) or None
    return Planned(RowOutcome(row.line, "create", code, row.url, note, len(row.clicks)), row, tags)


class _Existing(msgspec.Struct, frozen=True):
    code: str


def _code_for(
    conn: Connection, row: ImportRow, policy: Policy, known: Known
) -> tuple[str | _Existing | None, str | None, bool]:
    """(code to create with, None for a random one, or the _Existing link the row already
    is; a note for the report; whether the row is a conflict the policy refuses)."""
    if row.code is None:
        existing = known.by_moment.get((row.url, row.created_at)) if row.created_at else known.by_url.get(row.url)
        if existing is not None:
            return (
                _Existing(existing),
                "the account has this destination" + (" from then" if row.created_at else ""),
                False,
            )
        if (row.url, row.created_at) in known.planned:
            return _Existing(""), f"the same as line {known.planned[(row.url, row.created_at)]}", False
        return None, None, False
    if not validation.CODE_PATTERN.fullmatch(row.code):
        raise ValidationError("code", f"{row.code!r} must be 3-32 characters of A-Z, a-z, 0-9, _ and -")
    first_problem = None
    for number in range(1, MAX_SUFFIX + 1):
        candidate = row.code if number == 1 else f"{row.code[: 32 - len(str(number)) - 1]}-{number}"
        problem = _taken(conn, candidate, row.url, known)
        if isinstance(problem, _Existing):
            note = None if number == 1 else f"code {row.code!r} {first_problem}: imported before as {candidate!r}"
            return problem, note, False
        if problem is None:
            note = None if number == 1 else f"code {row.code!r} {first_problem}: used {candidate!r}"
            return candidate, note, False
        first_problem = first_problem or problem
        if policy != "suffix":
            return None, f"code {row.code!r} {problem}", True
    return None, f"code {row.code!r} {first_problem}, and so are its suffixes up to -{MAX_SUFFIX}", True


def _taken(conn: Connection, code: str, url: str, known: Known) -> str | _Existing | None:
    """Why `code` cannot be created for `url` (None: it can), or the _Existing link it is."""
    if code.lower() in validation.RESERVED_CODES:
        return "is reserved here"
    if code in known.claimed:
        claimed_url, line = known.claimed[code]
        return _Existing(code) if claimed_url == url else f"is taken by line {line}"
    found = link_store.link_by_code(conn, code)
    if found is None:
        return None
    if found["account_id"] == known.account_id and found["original_url"] == url:
        return _Existing(code)
    return "is taken"


TITLE_LENGTH, DESCRIPTION_LENGTH = 200, 500  # the API's limits (links.schema)


def new_link(row: ImportRow) -> tuple[CreateLink, list[str]]:
    """The link to create, and what was changed to fit our rules, for the report."""
    title, title_note = _fitted("title", row.title, TITLE_LENGTH)
    description, description_note = _fitted("description", row.description, DESCRIPTION_LENGTH)
    body = CreateLink(
        original_url=row.url, title=title, description=description, ios_url=row.ios_url, android_url=row.android_url
    )
    return body, [note for note in (title_note, description_note) if note]


def _fitted(field: str, text: str | None, limit: int) -> tuple[str | None, str | None]:
    """A source's title or description as our rules take it: line breaks, tabs and runs of
    spaces as one space (YOURLS keeps pages' titles as they were), blank as none, and cut to
    `limit` characters rather than the whole link refused."""
    if text is None:
        return None, None
    text = " ".join(text.split())
    if len(text) > limit:
        return text[:limit], f"{field} cut to {limit} characters"
    return text or None, None
