"""Links the cache does not hold: every miss of one turn of the event loop read in one query,
each visit given its own link."""

from __future__ import annotations

import asyncio

import pytest

from shortlink.accounts import service as accounts
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.storage import links as link_store
from shortlink.times import utcnow
from tests.conftest import SHORT_HOST
from tests.support.asgi import call_app, http_scope
from tests.support.visitors import DESKTOP


def add_links(conn, codes) -> None:
    accounts.create_key(conn, "owner@example.com")
    account_id = accounts.account_for(conn, "owner@example.com")["id"]
    for code in codes:
        body = CreateLink(original_url=f"https://example.com/{code}", custom_code=code)
        service.create_link(
            conn,
            account_id,
            body,
            is_ours=lambda host: False,
            base=SHORT_HOST,
            daily_limit=1000,
            now=utcnow(),
            fetch_title=False,
        )


@pytest.mark.both_backends
def test_the_rows_of_any_number_of_codes_are_read_each_once(conn):
    codes = [f"m{number:03d}" for number in range(300)]  # more than one statement's worth
    add_links(conn, codes)

    def read(wanted: list[str]) -> list[tuple[str, str]]:
        return sorted((row[3], row[4]) for row in link_store.visit_target_rows(conn, wanted))

    assert read([*codes, "nothing-here"]) == sorted((code, f"https://example.com/{code}") for code in codes)
    assert read(["m007"]) == [("m007", "https://example.com/m007")]
    # Three codes, padded to four with a repeat: each row still comes once.
    assert [code for code, _ in read(["m003", "m001", "m002"])] == ["m001", "m002", "m003"]
    assert read(["M007", "nothing-here"]) == []  # codes are case-sensitive


def point_reads(client) -> list[str]:
    """The statements the app's point-read connection will run from now on."""
    statements: list[str] = []
    point_reader = client.app.state.services.db.read_now(lambda conn: conn)
    point_reader.set_trace_callback(statements.append)
    return statements


def test_the_misses_of_one_turn_of_the_loop_are_one_read(client, conn):
    add_links(conn, ["one", "two"])
    services = client.app.state.services
    statements = point_reads(client)

    async def misses_in_one_turn():
        return await asyncio.gather(*(services.visits.loader.load(code) for code in ["one", "two", "one", "nope"]))

    targets = client.blocking_portal.call(misses_in_one_turn)
    assert [target and target.original_url for target in targets] == [
        "https://example.com/one",
        "https://example.com/two",
        "https://example.com/one",
        None,
    ]
    assert len([sql for sql in statements if sql.startswith("SELECT")]) == 1
    # Kept in the cache, the code without a link too.
    assert services.link_cache.get("two").code == "two"
    assert services.link_cache.get("nope") is None


def test_a_visit_cancelled_while_it_waits_leaves_the_others_theirs(client, conn):
    add_links(conn, ["one"])
    loader = client.app.state.services.visits.loader

    async def one_cancelled():
        first = asyncio.ensure_future(loader.load("one"))
        second = asyncio.ensure_future(loader.load("one"))
        await asyncio.sleep(0)  # both are waiting for the end of this turn
        first.cancel()
        target = await second
        return first.cancelled(), target.code

    assert client.blocking_portal.call(one_cancelled) == (True, "one")


def test_a_failed_read_fails_each_of_its_visits_and_the_next_turn_reads_again(client, conn):
    add_links(conn, ["one"])
    loader = client.app.state.services.visits.loader

    async def one_turn(*codes: str) -> list:
        return await asyncio.gather(*(loader.load(code) for code in codes), return_exceptions=True)

    # A lone surrogate cannot be encoded for the database: the turn's one read fails.
    failed = client.blocking_portal.call(one_turn, "one", "\ud800")
    assert [type(outcome) for outcome in failed] == [UnicodeEncodeError, UnicodeEncodeError]
    [target] = client.blocking_portal.call(one_turn, "one")
    assert target.code == "one"


def test_many_visitors_at_once_each_get_their_own_link(client, conn):
    codes = [f"v{number:02d}" for number in range(40)]
    add_links(conn, codes)
    statements = point_reads(client)

    async def visit_all():
        async def visit(code: str) -> tuple[int, str]:
            scope = http_scope("GET", f"/l/{code}", [(b"host", b"testserver.local"), (b"user-agent", DESKTOP.encode())])
            status, headers, _body = await call_app(client.app, scope)
            return status, headers[b"location"].decode()

        return await asyncio.gather(*(visit(code) for code in codes))

    answers = client.blocking_portal.call(visit_all)
    assert answers == [(302, f"https://example.com/{code}") for code in codes]
    assert len([sql for sql in statements if sql.startswith("SELECT")]) == 1
