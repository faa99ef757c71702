"""Content-Security-Policy headers: nothing allowed by default, each page's own style sheet and
script allowed by their hash (or the dashboard's files by 'self'), no framing, no <base>."""

from __future__ import annotations

import base64
import hashlib


def csp_hash(source: str) -> str:
    """The source expression that allows exactly this inline style sheet or script."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def policy(
    *,
    style: str,
    script: str | None = None,
    img: str | None = None,
    connect: str | None = None,
    form_action: str = "'none'",
) -> str:
    """A page's policy from its source expressions: `style="'self'"` or `style=csp_hash(STYLE)`."""
    directives = {"default-src": "'none'", "style-src": style, "script-src": script, "img-src": img}
    directives |= {
        "connect-src": connect,
        "form-action": form_action,
        "base-uri": "'none'",
        "frame-ancestors": "'none'",
    }
    return "; ".join(f"{name} {sources}" for name, sources in directives.items() if sources is not None)
