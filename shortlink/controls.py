"""Control characters: the ones stored text may not hold, and text made safe for a terminal.

C0 and C1 controls and DEL (a terminal obeys ESC sequences: retitling, clearing, hiding
what follows), Unicode line and paragraph separators, and the bidi controls, marks
included (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), which reorder what is
shown around them.
"""

from __future__ import annotations

import re

CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# What a terminal may show as it is: line breaks and tabs between the lines we print.
_UNSAFE_ON_A_TERMINAL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def terminal_safe(text: str) -> str:
    """`text` with every control character but line breaks and tabs written as an escape
    (ESC is shown as \\x1b), so stored text printed on a terminal is only ever text."""
    return _UNSAFE_ON_A_TERMINAL.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
