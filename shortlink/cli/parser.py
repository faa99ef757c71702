"""The `shortlink` parser: the top level, and each command group's module adding its commands."""

from __future__ import annotations

import argparse

from shortlink.cli import accounts, apps, backup, demo, doctor, domains, imports, links, mcp, migrate, serve, webhooks
from shortlink.cli.common import Parser

DESCRIPTION = (
    "The `shortlink` command: serve, links, accounts, keys, subscriptions, domains, demo data, MCP, backups, doctor."
)
COMPLETION_SHELLS = ("bash", "zsh", "tcsh", "fish", "powershell")
# In the order `shortlink --help` lists them.
GROUPS = (serve, links, accounts, domains, demo, mcp, migrate, imports, webhooks, backup, doctor, apps)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="shortlink", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for group in GROUPS:
        group.register(commands)
    # `shortlink completion bash > /etc/bash_completion.d/shortlink`
    completion = commands.add_parser(
        "completion", help=f"print the shell completion script ({', '.join(COMPLETION_SHELLS)})"
    )
    completion.add_argument("shell", choices=COMPLETION_SHELLS, help="print shell completion script")
    completion.set_defaults(run=run_completion)
    return parser


def run_completion(args: argparse.Namespace) -> None:
    # shtab is imported here, by the one command that uses it: at the top every command
    # would pay for its import.
    import shtab

    print(shtab.complete(build_parser(), args.shell))
