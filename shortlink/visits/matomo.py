"""Matomo's device-detector rule files, as shipped in the `device_detector` package (LGPL data).

Only the data is used: the package's own parser is far too slow for the click path.
"""

from __future__ import annotations

import importlib.resources
from typing import Any

import yaml

# How Matomo anchors every rule (its BOUNDED_REGEX): no letter or digit right before it.
BOUNDARY = r"(?:^|[^A-Z0-9_-]|[^A-Z0-9-]_|sprd-|MZ-)"


def rules(path: str, kind: type[list[Any]] | type[dict[str, Any]]) -> Any:
    """The parsed rule file at `path` inside the package (e.g. "regexes/upstream/bots.yml")."""
    # libyaml (PyYAML's C loader) rather than yaml-rs: yaml-rs is some times faster, but
    # its bundled allocator keeps the memory of the parse (over 10 MiB) for the process's
    # whole life.
    parsed = yaml.load((importlib.resources.files("device_detector") / path).read_text("utf-8"), yaml.CSafeLoader)
    if not isinstance(parsed, kind):  # a new release changed its format: fail at start-up, loudly
        raise ValueError(f"device_detector {path}: expected a {kind.__name__}")
    return parsed
