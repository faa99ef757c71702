"""A server's parse of an uploaded export, in a process of its own.

`python -m shortlink.imports.worker SOURCE` reads the file on standard input and writes the
rows (or the file's one error) on standard output as msgpack. The server never parses an
upload itself: a parser's C code (a regular expression, a JSON decoder) holds the interpreter
lock for as long as it runs, which no thread of the server would give back to its event loop,
and a process can be ended at a deadline (shortlink.application.imports.parse_upload), a thread cannot.
"""

from __future__ import annotations

import sys

import msgspec

from shortlink.imports import PARSERS
from shortlink.imports.rows import BadRow, FileError, ImportRow


class Parsed(msgspec.Struct):
    """The rows in the file's order (each an ImportRow or a BadRow), or the file's error."""

    rows: list[tuple[ImportRow | None, BadRow | None]] = []
    error: str | None = None

    def items(self) -> list[ImportRow | BadRow]:
        found: list[ImportRow | BadRow] = []
        for row, bad in self.rows:
            if row is not None:
                found.append(row)
            elif bad is not None:
                found.append(bad)
        return found


def encode(rows: list[ImportRow | BadRow]) -> bytes:
    return msgspec.msgpack.encode(
        Parsed(rows=[(row, None) if isinstance(row, ImportRow) else (None, row) for row in rows])
    )


DECODER = msgspec.msgpack.Decoder(Parsed)


def main(argv: list[str]) -> int:
    [source] = argv
    data = sys.stdin.buffer.read()
    try:
        answer = encode(PARSERS[source](data))
    except FileError as exc:
        answer = msgspec.msgpack.encode(Parsed(error=str(exc)))
    sys.stdout.buffer.write(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
