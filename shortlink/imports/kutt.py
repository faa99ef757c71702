"""Kutt: its API's links JSON.

The body of `GET /api/v2/links` (`{"limit", "skip", "total", "data": [...]}`) or a list of
links, each with `address` (the code), `target`, `description`, `created_at`, `expire_in`,
`password` (true when protected) and `banned`. Kutt keeps no click history it exports.

A password-protected link is refused (reported): Kutt never gives its password out, and
imported without one it would be open to anyone. A banned link is refused too.
"""

from __future__ import annotations

from typing import Any

from shortlink.imports.rows import BadRow, FileError, ImportRow, decode, iso_time, json_document, json_text


def parse(data: bytes) -> list[ImportRow | BadRow]:
    document = json_document(decode(data))
    links = document.get("data") if isinstance(document, dict) else document
    if not isinstance(links, list):
        raise FileError("expected Kutt's links JSON: an object with `data`, or a list of links")
    return [_row(number, link) for number, link in enumerate(links, start=1)]


def _row(number: int, link: Any) -> ImportRow | BadRow:
    if not isinstance(link, dict):
        return BadRow(number, "not a link: expected an object")
    try:
        target = json_text(link, "target")
        if target is None:
            return BadRow(number, "no target")
        if link.get("password"):
            return BadRow(number, "password-protected in Kutt, which does not export passwords")
        if link.get("banned"):
            return BadRow(number, "banned in Kutt")
        created, expires = json_text(link, "created_at"), json_text(link, "expire_in")
        return ImportRow(
            line=number,
            url=target,
            code=json_text(link, "address"),
            title=json_text(link, "description"),
            created_at=iso_time("created_at", created) if created else None,
            expires_at=iso_time("expire_in", expires) if expires else None,
        )
    except ValueError as exc:
        return BadRow(number, str(exc))
