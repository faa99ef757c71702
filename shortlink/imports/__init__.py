"""Reading other link services' export files into rows this service can import.

One module per source, each with a pure `parse(data: bytes) -> list[ImportRow | BadRow]`:
no database, no network. `shortlink.application.imports` applies the rows to an account through
the same rules as every door; a server runs the parse in a process of its own (`worker`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from shortlink.imports import bitly, fdl, generic, kutt, shlink, yourls
from shortlink.imports.rows import BadRow, ImportRow

# What an import does with a code that is taken or reserved here (shortlink.application.imports).
Policy = Literal["skip", "suffix", "fail"]
POLICIES: tuple[Policy, ...] = ("skip", "suffix", "fail")

Parser = Callable[[bytes], list[ImportRow | BadRow]]

PARSERS: dict[str, Parser] = {
    "csv": generic.parse,
    "bitly": bitly.parse,
    "shlink": shlink.parse,
    "kutt": kutt.parse,
    "yourls": yourls.parse,
    "fdl": fdl.parse,
}
