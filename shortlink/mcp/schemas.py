"""JSON Schemas of tool arguments and results, generated from the msgspec Structs.

The same Structs decode the API's bodies, so a tool's schema says exactly what the
API accepts. msgspec writes the root as a `$ref`; MCP wants an object schema at the
top, so the root definition is inlined and the others stay under `$defs`.
"""

from __future__ import annotations

from typing import Any

import msgspec

# The Structs carry OpenAPI-only keywords (format, pattern, const) under "extra", which
# Litestar merges into its document; here they are merged into the node too.
EXTRA = "extra"


def object_schema(struct: type[msgspec.Struct]) -> dict[str, Any]:
    (root,), definitions = msgspec.json.schema_components([struct], ref_template="#/$defs/{name}")
    name = root["$ref"].rsplit("/", 1)[1]
    schema = _merge_extra(definitions.pop(name))
    if definitions:
        schema["$defs"] = {key: _merge_extra(value) for key, value in definitions.items()}
    return schema


def _merge_extra(node: Any) -> Any:
    if isinstance(node, list):
        return [_merge_extra(item) for item in node]
    if not isinstance(node, dict):
        return node
    merged: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":  # names of fields, never keywords
            merged[key] = {name: _merge_extra(field) for name, field in value.items()}
        elif key != EXTRA:
            merged[key] = _merge_extra(value)
    merged.update(node.get(EXTRA, {}))
    return merged
