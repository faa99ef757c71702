"""SQL for tags on links (migration 0011): one row per tag a link carries."""

from __future__ import annotations

from collections.abc import Sequence

from shortlink.storage.base import Connection, transaction

# Link ids per statement: well under every engine's limit on parameters.
MAX_LINKS_PER_READ = 500


def tags_of_links(conn: Connection, link_pks: Sequence[int]) -> dict[int, list[tuple[str, str]]]:
    """Each link's (name, colour) pairs, by name; a link without tags has no entry."""
    found: dict[int, list[tuple[str, str]]] = {}
    for start in range(0, len(link_pks), MAX_LINKS_PER_READ):
        chunk = list(link_pks[start : start + MAX_LINKS_PER_READ])
        rows = conn.execute(
            f"SELECT link_id, name, colour FROM link_tags WHERE link_id IN ({','.join('?' * len(chunk))})"
            " ORDER BY link_id, name",
            chunk,
        )
        for link_pk, name, colour in rows:
            found.setdefault(link_pk, []).append((name, colour))
    return found


def colours_of(conn: Connection, account_id: int, names: Sequence[str]) -> dict[str, str]:
    """The colour the account already gives each of these names (those it uses)."""
    if not names:
        return {}
    rows = conn.execute(
        f"SELECT name, min(colour) FROM link_tags WHERE account_id = ? AND name IN ({','.join('?' * len(names))})"
        " GROUP BY name",
        (account_id, *names),
    )
    return dict(rows)


def replace_link_tags(conn: Connection, account_id: int, link_pk: int, tags: Sequence[tuple[str, str]]) -> None:
    """The link carries exactly `tags` (name, colour) from now on; a name's colour changes
    on every link of the account, so that one name has one colour."""
    with transaction(conn):
        conn.execute("DELETE FROM link_tags WHERE link_id = ?", (link_pk,))
        for name, colour in tags:
            conn.execute(
                "UPDATE link_tags SET colour = ? WHERE account_id = ? AND name = ? AND colour <> ?",
                (colour, account_id, name, colour),
            )
            conn.execute(
                "INSERT INTO link_tags (link_id, account_id, name, colour) VALUES (?, ?, ?, ?)",
                (link_pk, account_id, name, colour),
            )


def tags_of_account(conn: Connection, account_id: int) -> list[tuple[str, str]]:
    """Every (name, colour) the account's links carry, by name."""
    rows = conn.execute(
        "SELECT name, min(colour) FROM link_tags WHERE account_id = ? GROUP BY name ORDER BY name", (account_id,)
    )
    return [(name, colour) for name, colour in rows]
