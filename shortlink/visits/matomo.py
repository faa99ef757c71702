"""Matomo's device-detector rule files, as shipped in the `device_detector` package (LGPL data).

Only the data is used: the package's own parser is far too slow for the click path.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.resources
import os
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import yaml

# How Matomo anchors every rule (its BOUNDED_REGEX): no letter or digit right before it.
BOUNDARY = r"(?:^|[^A-Z0-9_-]|[^A-Z0-9-]_|sprd-|MZ-)"


def rules(path: str, kind: type[list[Any]] | type[dict[str, Any]]) -> Any:
    """The parsed rule file at `path` inside the package (e.g. "regexes/upstream/bots.yml")."""
    text = (importlib.resources.files("device_detector") / path).read_bytes()
    cached = _cache_file(text)
    parsed = _read_cache(cached) if cached is not None else None
    if parsed is None:
        # libyaml (PyYAML's C loader) rather than yaml-rs: yaml-rs is some times faster, but
        # its bundled allocator keeps the memory of the parse (over 10 MiB) for the process's
        # whole life.
        parsed = yaml.load(text.decode("utf-8"), yaml.CSafeLoader)
        if cached is not None:
            _write_cache(cached, parsed)
    if not isinstance(parsed, kind):  # a new release changed its format: fail at start-up, loudly
        raise ValueError(f"device_detector {path}: expected a {kind.__name__}")
    return parsed


# Parsing the YAML is most of a start's cost after the imports (docs/performance.md), the same
# files every time: each parse is kept as MessagePack under the user's cache directory, named
# by the file's content (a new release of the package is a new name). Without a writable cache
# directory (a service user without a home) every start parses, as before.
def _cache_file(text: bytes) -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset or relative: the XDG default
        base = os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # no home directory at all
        return None
    return Path(base) / "shortlink" / f"device-detector-{hashlib.sha256(text).hexdigest()[:32]}.msgpack"


def _read_cache(cached: Path) -> Any:
    try:
        return msgspec.msgpack.decode(cached.read_bytes())
    except (OSError, msgspec.DecodeError):
        return None  # none yet, unreadable or damaged: parsed again and written anew


def _write_cache(cached: Path, parsed: Any) -> None:
    """Best effort: a cache that cannot be written only means the next start parses again."""
    with contextlib.suppress(OSError):
        cached.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Written aside and renamed: processes starting together never read half a file.
        with tempfile.NamedTemporaryFile(dir=cached.parent, prefix=".", suffix=".partial", delete=False) as out:
            out.write(msgspec.msgpack.encode(parsed))
        try:
            os.replace(out.name, cached)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(out.name)
