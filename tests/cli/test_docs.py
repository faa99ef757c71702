"""The manual in docs/ names every configuration key, command and route (Datasette's
test_docs.py does the same): a setting, command or route nobody documented fails here; and a
file of the project the pages name that is not there (moved or renamed) fails too."""

from __future__ import annotations

import argparse
import re

import msgspec
import pytest

from shortlink.cli import build_parser
from shortlink.config import Config
from tests.support import paths

DOCS = paths.REPO / "docs"
README = paths.REPO / "README.md"
CONTRIBUTING = paths.REPO / "CONTRIBUTING.md"
# Routes whose documented form is not their route pattern: the bio pages' catch-all routes.
DOCUMENTED_AS = {"/{name}": "/@<handle>", "/{name}/{file}": "/@<handle>/qr."}


def manual() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in sorted(DOCS.glob("*.md")))


def config_keys() -> list[tuple[str, str]]:
    keys = []
    for section in msgspec.structs.fields(Config):
        if isinstance(section.type, type) and issubclass(section.type, msgspec.Struct):
            keys += [(section.encode_name, field.encode_name) for field in msgspec.structs.fields(section.type)]
    return keys


@pytest.mark.parametrize(("section", "key"), config_keys())
def test_every_configuration_key_is_in_the_configuration_page(section, key):
    rows = [
        line
        for line in (DOCS / "configuration.md").read_text(encoding="utf-8").splitlines()
        if line.startswith(f"| `[{section}]")
    ]
    assert any(f"[{section}] {key}`" in row or f"`{key}`" in row for row in rows), f"[{section}] {key}"


def commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[str]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += commands(sub, (*prefix, name)) or [" ".join((*prefix, name))]
    return found


@pytest.mark.parametrize("command", commands(build_parser()))
def test_every_command_is_in_the_command_line_page(command):
    assert f"shortlink {command}" in (DOCS / "cli.md").read_text(encoding="utf-8"), command


def test_every_route_is_in_the_manual(config):
    from shortlink.web.asgi import create_app

    text = manual() + README.read_text(encoding="utf-8")
    missing = []
    for route in create_app(config).routes:
        path = re.sub(r"\{(\w+):[^}]+\}", r"{\1}", route.path)
        if path.startswith("/api/v1/schema/{"):
            continue  # the schema's other renderings, which answer what /api/v1/schema does
        wanted = DOCUMENTED_AS.get(path, path)
        # Any placeholder name, as {id} or <id>; API paths with or without the /api/v1 prefix.
        pattern = re.sub(r"\\\{\w+\\\}", r"(\\{\\w+\\}|<\\w+>)", re.escape(wanted))
        if path.startswith("/api/v1/") and path != "/api/v1/schema":
            pattern = f"(/api/v1)?{pattern.removeprefix(re.escape('/api/v1'))}"
        if not re.search(f"`[A-Z ]*{pattern}", text) and not re.search(pattern + r"[`\s)]", text):
            missing.append(path)
    assert missing == [], missing


def test_every_file_the_pages_name_exists():
    """`tests/visitors/test_visitor_faults.py`, `visits/respond.py` (under shortlink/),
    `deploy/shortlink.service` (under docs/): a path in backquotes is one of the project's files.
    Absolute paths (/etc/…, URL paths) and placeholders (NNNN) are not."""
    missing = []
    for page in [README, CONTRIBUTING, *sorted(DOCS.glob("*.md"))]:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for found in re.finditer(r"`([\w.-]+/[\w./-]+\.(?:py|sql|html|js|css|toml|json|md|service|timer))`", line):
                path = found.group(1)
                if path.startswith(".") or "NNNN" in path:
                    continue
                if not any((base / path).exists() for base in (paths.REPO, paths.REPO / "shortlink", DOCS)):
                    missing.append(f"{page.name}:{number}: {path}")
    assert missing == [], missing
