"""The `shortlink` command: serve, links, accounts, keys, subscriptions, domains, demo data, MCP, backups, doctor.

Every command opens the same SQLite file (migrating it if needed) and calls the
same functions the API uses, so it works while the server is running. Each command
returns its result as (JSON value, human text); `main` prints one or the other, so
`--json` always prints exactly one JSON document on stdout.

Exit codes: 0 done; 1 usage, bad configuration, invalid input or refused; 2 not found;
130 stopped by Ctrl-C (what was finished is kept, nothing half-written).

`parser.py` builds the parser from one module per command group, each adding its own
commands (`register`); `common.py` holds what they share.
"""

from __future__ import annotations

from shortlink.cli.common import EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE, Unhealthy, fail, print_json
from shortlink.cli.parser import build_parser
from shortlink.cli.progress import INTERRUPTED_EXIT_CODE
from shortlink.config import ConfigError
from shortlink.controls import terminal_safe
from shortlink.errors import NotFoundError, ShortlinkError
from shortlink.stopping import Interrupted

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    exit_code = EXIT_OK
    try:
        output = args.run(args)
    except Unhealthy as unhealthy:
        output, exit_code = unhealthy.output, EXIT_USAGE
    except ConfigError as exc:
        return fail(args, "CONFIGURATION", str(exc), EXIT_USAGE)
    except NotFoundError as exc:
        return fail(args, exc.code, exc.message, EXIT_NOT_FOUND)
    except ShortlinkError as exc:
        # A plain ShortlinkError is the CLI refusing (a file exists, no --yes...).
        return fail(args, "REFUSED" if type(exc) is ShortlinkError else exc.code, exc.message, EXIT_USAGE)
    except Interrupted as exc:
        return fail(args, "INTERRUPTED", str(exc) or "interrupted", INTERRUPTED_EXIT_CODE)
    if output is not None:
        value, text = output
        if args.json:
            print_json(value)  # JSON escapes control characters itself
        else:
            # Stored text (e-mails, names, titles, URLs) may predate the rules refusing
            # control characters: a terminal is never handed one raw.
            print(terminal_safe(text))
    return exit_code
