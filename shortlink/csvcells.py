"""Text cells of every CSV this service writes, made safe for spreadsheets (OWASP "CSV Injection").

Visitors choose some of what lands in a CSV (a `utm_source`, a referring host) and account
holders the rest (titles, descriptions, tags); a spreadsheet runs a cell starting with `=`, `+`,
`-` or `@` (and, in some, a tab or carriage return) as a formula. Such a text cell is written
with a `'` before it, which spreadsheets show as text. Numbers written as numbers (clicks,
percentages) are left alone: `-5` there is a number, not a formula.

`unescape` undoes exactly that for the generic import, so an export imports as it was: it drops
the first `'` of a cell whose quotes are followed by one of those characters. A cell that itself
starts with quotes and then such a character gets one more quote on the way out, so every text
comes back unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable

FORMULA_STARTS = frozenset("=+-@\t\r")


def _needs_quote(text: str) -> bool:
    return text.lstrip("'")[:1] in FORMULA_STARTS


def safe(value: object) -> object:
    """A text cell with a `'` before it when a spreadsheet would read it as a formula; other
    values (numbers) as they are."""
    if isinstance(value, str) and _needs_quote(value):
        return "'" + value
    return value


def safe_row(values: Iterable[object]) -> list[object]:
    return [safe(value) for value in values]


def safe_record(record: dict[str, str]) -> dict[str, object]:
    return {key: safe(value) for key, value in record.items()}


def unescape(text: str) -> str:
    """A cell as it was before `safe` (the generic import of our own export)."""
    if text.startswith("'") and _needs_quote(text):
        return text[1:]
    return text
