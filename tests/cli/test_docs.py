"""The manual in docs/ names every configuration key, command and route (Datasette's
test_docs.py does the same): a setting, command or route nobody documented fails here; so does a
documented default the code or shortlink.toml does not have, a file of the project the pages name
that is not there (moved or renamed), and text that sends its reader to a tracker they do not have."""

from __future__ import annotations

import argparse
import re
import subprocess
import tomllib
from typing import Any

import msgspec
import pytest

from shortlink.cli.parser import build_parser
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


def documented_defaults() -> dict[tuple[str, str], str]:
    """(section, key) → its text in the default column of the configuration page's table, where a
    row names one or more keys of a section and their defaults in the same order."""
    found = {}
    for line in (DOCS / "configuration.md").read_text(encoding="utf-8").splitlines():
        if not line.startswith("| `["):
            continue
        keys_cell, defaults_cell = line.split("|")[1:3]
        keys, defaults = re.findall(r"`([^`]*)`", keys_cell), re.findall(r"`([^`]*)`", defaults_cell)
        assert len(keys) == len(defaults), f"configuration.md: {len(keys)} keys, {len(defaults)} defaults: {line}"
        section, first = re.fullmatch(r"\[(\w+)\] (\w+)", keys[0]).groups()
        for key, default in zip([first, *keys[1:]], defaults, strict=True):
            found[(section, key)] = default
    return found


def code_default(section: str, key: str) -> Any:
    return getattr(getattr(Config(), section), key)


def as_key_type(section: str, key: str, value: Any) -> Any:
    """`value` as the key's type, as loading the configuration reads it (an integer for a float key);
    a value that type refuses is returned as it is, so that it compares unequal."""
    annotation = next(f.type for f in msgspec.structs.fields(type(getattr(Config(), section))) if f.name == key)
    try:
        return msgspec.convert(value, annotation)
    except msgspec.ValidationError:
        return value


@pytest.mark.parametrize(("section", "key"), config_keys())
def test_every_documented_default_is_the_codes_and_shortlink_toml_s(section, key):
    """The page's default column is read as TOML (`true`, `[]`, `""`, `5`), or as plain text when it
    is not TOML (`127.0.0.1`); shortlink.toml, which shows every key it names with its default,
    must agree too."""
    text = documented_defaults()[(section, key)]
    try:
        documented = tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        documented = text
    assert as_key_type(section, key, documented) == code_default(section, key), f"[{section}] {key}: {text}"
    shipped = tomllib.loads((paths.REPO / "shortlink.toml").read_text(encoding="utf-8"))
    if key in shipped.get(section, {}):
        assert as_key_type(section, key, shipped[section][key]) == code_default(section, key), f"[{section}] {key}"


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


# A tracker issue or pull request by number ("issue", "PR" or "pull request" and a number, or a
# number after "(#"), or a pull request's narrative (its branch set against main): the text outlives
# the tracker, and its readers never see it.
TRACKER = re.compile(
    r"\b[Ii]ssues? #?\d+|\b(?:PR|[Pp]ull [Rr]equest)s? #?\d+|\(#\d+\)"
    r"|\b(?:this|that|the|our) (?:PR|pull request|branch)\b|\b(?:main|this change) vs\b|\bvs\.? (?:main|this change)\b"
)


def test_no_text_names_a_tracker_issue_or_pull_request():
    """Every tracked text file of the code, the docs, the tests (but the user-agent corpora's data),
    the benchmarks and the throwaway servers says what it means: the feature's name, or what was
    compared ("before and after the link cache"), never a number on a tracker."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "shortlink", "docs", "tests", "bench", "throwaway", "README.md", "CONTRIBUTING.md"],
        cwd=paths.REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    found = []
    for name in filter(None, listed.split("\0")):
        if re.fullmatch(r"tests/corpus/[^/]+\.json", name) or not (paths.REPO / name).is_file():
            continue
        try:
            text = (paths.REPO / name).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # not text: an image, a binary fixture
        found += [
            f"{name}:{number}: {line.strip()}"
            for number, line in enumerate(text.splitlines(), 1)
            if TRACKER.search(line)
        ]
    assert found == [], "\n".join(found)
