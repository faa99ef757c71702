"""Kutt: its API's links JSON.

The body of `GET /api/v2/links` (`{"limit", "skip", "total", "data": [...]}`) or a list of
links, each with `address` (the code), `target`, `description`, `created_at`, `expire_in`,
`password` (true when protected) and `banned`. Kutt keeps no click history it exports.

A password-protected link is refused (reported): Kutt never gives its password out, and
imported without one it would be open to anyone. A banned link is refused too.
"""

from __future__ import annotations

from typing import Any

import msgspec

from shortlink.imports.rows import BadRow, FileError, ImportRow, decode, iso_time


def parse(data: bytes) -> list[ImportRow | BadRow]:
    try:
        document = msgspec.json.decode(decode(data))
    except msgspec.DecodeError as exc:
        raise FileError(f"not JSON: {exc}") from None
    links = document.get("data") if isinstance(document, dict) else document
    if not isinstance(links, list):
        raise FileError("expected Kutt's links JSON: an object with `data`, or a list of links")
    return [_row(number, link) for number, link in enumerate(links, start=1)]


def _row(number: int, link: Any) -> ImportRow | BadRow:
    if not isinstance(link, dict) or not link.get("target"):
        return BadRow(number, "no target")
    if link.get("password"):
        return BadRow(number, "password-protected in Kutt, which does not export passwords")
    if link.get("banned"):
        return BadRow(number, "banned in Kutt")
    try:
        return ImportRow(
            line=number,
            url=link["target"],
            code=link.get("address") or None,
            title=link.get("description") or None,
            created_at=iso_time("created_at", link["created_at"]) if link.get("created_at") else None,
            expires_at=iso_time("expire_in", link["expire_in"]) if link.get("expire_in") else None,
        )
    except ValueError as exc:
        return BadRow(number, str(exc))
