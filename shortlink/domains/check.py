"""One check of a domain's record, the server's (periodic, or asked for) and `shortlink domain
verify`'s alike: the DNS lookup, with no connection held while it waits, then what it saw stored
(`service.record_outcome`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from shortlink.domains import service
from shortlink.domains.lookup import LookupFailed, txt_values
from shortlink.storage import Row
from shortlink.times import utcnow

# Runs `fn(conn, *args)` on a connection that may write: the server's writer (`Database.write`),
# or the CLI's one connection.
Write = Callable[..., Awaitable[Any]]


async def check(row: Row, nameservers: list[str], write: Write) -> None:
    """Look for `row`'s TXT record now and store the outcome. The operator's domains (no token)
    have no record: callers check those only when they have one."""
    found, error = False, None
    try:
        found = service.holds_token(row, await txt_values(service.record_name(row["host"]), nameservers))
    except LookupFailed as exc:
        error = str(exc)
    await write(service.record_outcome, row, found, error, utcnow())
