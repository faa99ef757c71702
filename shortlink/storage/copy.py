"""SQL for `shortlink migrate`: every table of an SQLite installation, copied as it is into
an empty PostgreSQL database of the same schema version.

The copy is one PostgreSQL transaction, streamed with COPY in batches: a run that fails or
is interrupted leaves the target as empty as it found it, so running again is safe. The
rollups are copied as they are, not recomputed: the rollup triggers stand aside while the
copying session says so (PostgreSQL's migration 0006, `copying()`).
"""

from __future__ import annotations

from collections.abc import Callable

from shortlink.storage.base import Connection
from shortlink.storage.postgresql import PostgresConnection
from shortlink.storage.schema import value

# Every table, parents before the tables that refer to them.
TABLES = (
    "accounts",
    "subscriptions",
    "api_keys",
    "domains",
    "settings",
    "links",
    "link_tags",
    "link_rules",
    "link_rule_days",
    "link_rule_visitors",
    "link_destinations",
    "apps",
    "link_apps",
    "deferred_redemptions",
    "link_app_days",
    "link_creations",
    "pending_fetches",
    "user_agents",
    "click_rows",
    "link_days",
    "link_dimensions",
    "link_visitors",
    "account_days",
    "account_dimensions",
    "account_visitors",
    "account_hours",
    "account_hour_dimensions",
    "link_hours",
    "bio_pages",
    "bio_buttons",
    "bio_page_days",
    "dashboard_sessions",
    "webhook_endpoints",
    "webhook_events",
    "webhook_deliveries",
    "webhook_attempts",
)
# Tables whose id comes from an identity sequence on PostgreSQL.
IDENTITY_TABLES = (
    "accounts",
    "api_keys",
    "links",
    "user_agents",
    "link_destinations",
    "click_rows",
    "bio_pages",
    "dashboard_sessions",
    "apps",
    "webhook_endpoints",
    "webhook_events",
    "webhook_deliveries",
    "webhook_attempts",
)


def row_count(conn: Connection, table: str) -> int:
    return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def verified_answers(conn: Connection, links: int) -> tuple[list[int], list[tuple[int, str]]]:
    """What a move checks answer by answer on both sides: every account's id, and the account
    and public id of the `links` links with the most clicks."""
    accounts = [row[0] for row in conn.execute("SELECT id FROM accounts ORDER BY id")]
    busiest = conn.execute(
        "SELECT account_id, public_id FROM links ORDER BY click_count DESC, id LIMIT ?", (links,)
    ).fetchall()
    return accounts, [(row[0], row[1]) for row in busiest]


def columns_of(target: PostgresConnection, table: str) -> list[str]:
    rows = target.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
        " AND table_name = ? ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [row[0] for row in rows]


def is_empty(target: PostgresConnection) -> bool:
    return all(row_count(target, table) == 0 for table in TABLES)


def copy_all(
    source: Connection,
    target: PostgresConnection,
    batch_rows: int,
    copied: Callable[[str, int], None],
    replace: bool = False,
) -> None:
    """Copy every table in one transaction; `copied(table, rows)` after each batch. With
    `replace`, the target's rows are deleted first, in the same transaction."""
    with target.transaction():
        if replace:
            target.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY")
        target.execute("SET LOCAL shortlink.copying = 'on'")
        for table in TABLES:
            names = ", ".join(columns_of(target, table))
            rows = source.execute(f"SELECT {names} FROM {table}")
            with target.raw.cursor().copy(f"COPY {table} ({names}) FROM STDIN") as stream:
                while batch := rows.fetchmany(batch_rows):
                    for row in batch:
                        stream.write_row(tuple(row))
                    copied(table, len(batch))
        _continue_sequences(source, target)
        target.execute("UPDATE data_changes SET version = version + 1")


def _continue_sequences(source: Connection, target: PostgresConnection) -> None:
    """Each identity sequence goes on after the highest id copied; for links, after the
    highest id SQLite ever gave (its high-water mark), so no deleted link's id comes back."""
    for table in IDENTITY_TABLES:
        highest = value(target, f"SELECT coalesce(max(id), 0) FROM {table}")
        if table == "links":
            highest = max(highest, source.execute("SELECT last_id FROM link_id_high_water").fetchone()[0])
        # An empty table's sequence starts at 1 (is_called false: 1 is the next id).
        called = "true" if highest > 0 else "false"
        target.execute(f"SELECT setval(pg_get_serial_sequence(?, 'id'), ?::bigint, {called})", (table, max(highest, 1)))
