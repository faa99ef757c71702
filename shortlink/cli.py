"""The `shortlink` command: serve, links, accounts, keys, subscriptions, domains, demo data, MCP, backups, doctor.

Every command opens the same SQLite file (migrating it if needed) and calls the
same functions the API uses, so it works while the server is running. Each command
returns its result as (JSON value, human text); `main` prints one or the other, so
`--json` always prints exactly one JSON document on stdout.

Exit codes: 0 done; 1 usage, bad configuration, invalid input or refused; 2 not found;
130 stopped by Ctrl-C (what was finished is kept, nothing half-written).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import msgspec

from shortlink.accounts import passwords, sessions
from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.config import Config, ConfigError, load_config
from shortlink.controls import terminal_safe
from shortlink.errors import NotFoundError, ShortlinkError, ValidationError, field_error
from shortlink.imports import PARSERS, POLICIES
from shortlink.keyfile import load_signing_key
from shortlink.link_rules.describe import rule_lines
from shortlink.link_rules.schema import RulesDocument
from shortlink.link_rules.service import link_rules
from shortlink.links import service
from shortlink.links.platforms import Platform
from shortlink.links.schema import Link, LinkFilter
from shortlink.progress import INTERRUPTED_EXIT_CODE, Interrupted, progress, stop_on_interrupt
from shortlink.storage import Connection, connect, is_postgresql, sqlite_path
from shortlink.storage.sqlite import backup
from shortlink.times import utcnow
from shortlink.visits.invalidation import changes_told
from shortlink.webhooks import endpoints as webhook_endpoints
from shortlink.webhooks import outbox
from shortlink.webhooks import policy as webhook_policy
from shortlink.webhooks.events import CreatedWebhook, CreateWebhook, Replay, RotatedSecret, Webhook
from shortlink.webhooks.secrets import secret_of, webhook_key

if TYPE_CHECKING:
    from shortlink.application.imports import Outcome

EXIT_OK, EXIT_USAGE, EXIT_NOT_FOUND = 0, 1, 2
SOURCES = ("DASHBOARD", "API", "MCP", "PUBLIC", "BIO")

# What a command returns: its JSON value and the text a person reads.
Output = tuple[Any, str]


class Unhealthy(Exception):
    """`doctor` found a problem, or `import` refused rows: the full report is printed all
    the same, with exit code 1."""

    def __init__(self, value: Any, text: str):
        super().__init__(text)
        self.output: Output = (value, text)


class Parser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error; here 2 means "not found", so usage is 1."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _common(parser: argparse.ArgumentParser, json_output: bool = True) -> None:
    parser.add_argument(
        "--db", help="SQLite file, or a sqlite:/// or postgresql:// URL (default: [storage] url, else [storage] path)"
    )
    parser.add_argument("--config", help="configuration file (default: ./shortlink.toml)")
    if json_output:
        parser.add_argument("--json", action="store_true", help="print exactly one JSON document on stdout")


COMPLETION_SHELLS = ("bash", "zsh", "tcsh", "fish", "powershell")


def _command(group, name: str, run: Callable, help: str, json_output: bool = True) -> argparse.ArgumentParser:
    parser = group.add_parser(name, help=help)
    parser.set_defaults(run=run)
    _common(parser, json_output)
    return parser


def _group(commands, name: str, help: str):
    return commands.add_parser(name, help=help, description=help).add_subparsers(
        dest="action", required=True, metavar="ACTION", parser_class=Parser
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="shortlink", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    serve = _command(commands, "serve", cmd_serve, "run the server", json_output=False)
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument(
        "--workers", type=int, default=1, help="server processes on this port (more than 1 needs [redis] url)"
    )

    links = _group(commands, "links", "links of any account")
    listing = _command(links, "list", cmd_links_list, "list an account's links, newest first (the API's filters)")
    listing.add_argument("--email", required=True, help="the account")
    listing.add_argument("--search", help="in the code, URL, title and description")
    listing.add_argument("--platform", choices=[platform.value for platform in Platform])
    listing.add_argument("--short-code")
    listing.add_argument("--source", choices=SOURCES, help="where the link was made")
    listing.add_argument("--tag", help="only links carrying this tag (exact name)")
    state = listing.add_mutually_exclusive_group()
    state.add_argument("--active", dest="is_active", action="store_true", default=None)
    state.add_argument("--inactive", dest="is_active", action="store_false")
    listing.add_argument("--page", type=int, default=1)
    listing.add_argument("--limit", type=int, default=20, help="links per page, 1 to 100 (default 20)")
    show = _command(links, "show", cmd_links_show, "show one link")
    show.add_argument("link_id", metavar="ID")
    delete = _command(links, "delete", cmd_links_delete, "delete a link with its clicks (asks first)")
    delete.add_argument("link_id", metavar="ID")
    delete.add_argument("--yes", action="store_true", help="do not ask (needed when not on a terminal)")

    account_commands = _group(commands, "accounts", "accounts")
    _command(account_commands, "list", cmd_accounts_list, "list every account")

    key = _group(commands, "key", "API keys")
    create = _command(key, "create", cmd_key_create, "create a key (and the account, with Pro, if new)")
    create.add_argument("--email", required=True)
    create.add_argument("--name")
    _command(key, "revoke", cmd_key_revoke, "revoke a key by its id").add_argument("key_id")
    _command(key, "list", cmd_key_list, "list an account's keys").add_argument("--email", required=True)

    account = _group(commands, "account", "an account's dashboard sign-in")
    password = _command(
        account,
        "password",
        cmd_account_password,
        "set the dashboard password (and create the account, with Pro, if new)",
    )
    password.add_argument("--email", required=True)
    password.add_argument("--password-stdin", action="store_true", help="read the password from standard input")

    subscription = _group(commands, "subscription", "Pro subscriptions")
    set_sub = _command(subscription, "set", cmd_subscription_set, "activate or deactivate an account's subscription")
    set_sub.add_argument("--email", required=True)
    state = set_sub.add_mutually_exclusive_group(required=True)
    state.add_argument("--active", dest="active", action="store_true")
    state.add_argument("--inactive", dest="active", action="store_false")

    domain = _group(commands, "domain", "custom domains")
    add = _command(domain, "add", cmd_domain_add, "connect a custom domain to an account")
    add.add_argument("--email", required=True)
    add.add_argument("host")

    demo = _group(commands, "demo", "demo data")
    seed = _command(demo, "seed", cmd_demo_seed, "create demo links and record realistic clicks on them")
    seed.add_argument("--email", required=True, help="account (created with Pro if new)")
    seed.add_argument("--links", type=int, required=True)
    seed.add_argument("--clicks", type=int, required=True)
    seed.add_argument("--days", type=int, default=30, help="spread the clicks over this many days (default 30)")

    mcp = _command(
        commands,
        "mcp",
        cmd_mcp,
        "the MCP tools over stdio for local assistants; key from SHORTLINK_API_KEY",
        json_output=False,
    )
    mcp.add_argument("--url", help="relay to this running instance (its base URL) instead of using the database")

    migrate = _command(
        commands, "migrate", cmd_migrate, "copy this SQLite installation into an empty PostgreSQL database, verified"
    )
    migrate.add_argument("--to", required=True, metavar="URL", help="postgresql://user:password@host:port/database")
    migrate.add_argument(
        "--replace", action="store_true", help="delete what the target database holds first (a previous copy)"
    )
    importing = _command(
        commands,
        "import",
        cmd_import,
        "import links (and their click history) from another service's export file;"
        " the operator's import is not held to the daily link limit (the dashboard's is)",
    )
    importing.add_argument("source", choices=sorted(PARSERS), metavar="SOURCE", help=", ".join(sorted(PARSERS)))
    importing.add_argument("file", metavar="FILE", help="the export file (- for standard input)")
    importing.add_argument("--email", required=True, help="the account (created with Pro if new)")
    importing.add_argument("--dry-run", action="store_true", help="print what would happen, row by row; change nothing")
    importing.add_argument(
        "--on-conflict",
        choices=POLICIES,
        default="skip",
        help="a code taken or reserved here: skip the row, suffix the code (-2, -3...), or fail: import nothing",
    )
    importing.add_argument(
        "--clicks",
        metavar="CLICKS",
        help="the raw clicks of `export --clicks` (JSON lines): history of each code's link",
    )
    exporting = _command(
        commands, "export", cmd_export, "write every link of an account to stdout (the import's CSV)", json_output=False
    )
    exporting.add_argument("--email", required=True)
    exporting.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    _webhook_commands(commands)
    exporting.add_argument(
        "--clicks", action="store_true", help="write the raw clicks instead, as JSON lines (no visitor identity)"
    )
    exporting.add_argument("--from", dest="start", metavar="DATE", help="with --clicks: from this day (UTC) on")
    exporting.add_argument("--to", dest="end", metavar="DATE", help="with --clicks: up to this day (UTC), included")
    _command(commands, "backup", cmd_backup, "write a consistent copy of the live database").add_argument("path")
    doctor = _command(
        commands, "doctor", cmd_doctor, "check the configuration, database, data files and proxy settings"
    )
    doctor.add_argument(
        "--via", metavar="URL", help="fetch the association files from this address, each host's name as Host"
    )
    _app_commands(commands)
    # `shortlink completion bash > /etc/bash_completion.d/shortlink`
    completion = commands.add_parser(
        "completion", help=f"print the shell completion script ({', '.join(COMPLETION_SHELLS)})"
    )
    completion.add_argument("shell", choices=COMPLETION_SHELLS, help="print shell completion script")
    completion.set_defaults(run=cmd_completion)
    return parser


def cmd_completion(args: argparse.Namespace) -> None:
    # shtab is imported here, by the one command that uses it: at the top every command
    # would pay for its import.
    import shtab

    print(shtab.complete(build_parser(), args.shell))


def _webhook_commands(commands) -> None:
    hooks = _group(commands, "webhooks", "webhook endpoints of any account (docs/webhooks.md)")
    _command(hooks, "list", cmd_webhooks_list, "list an account's webhook endpoints").add_argument(
        "--email", required=True
    )
    add = _command(hooks, "add", cmd_webhooks_add, "add an endpoint; prints its secret (shown once)")
    add.add_argument("url", metavar="URL")
    add.add_argument("--email", required=True)
    add.add_argument("--event", dest="events", action="append", required=True, help="an event type (repeatable)")
    add.add_argument("--link", dest="link_ids", action="append", help="limit it to this link id (repeatable)")
    add.add_argument("--tag", dest="tags", action="append", help="limit it to links with this tag (repeatable)")
    add.add_argument("--description")
    _command(hooks, "remove", cmd_webhooks_remove, "delete an endpoint and its log").add_argument("webhook_id")
    rotate = _command(hooks, "rotate", cmd_webhooks_rotate, "a new secret; the old one signs too for a while")
    rotate.add_argument("webhook_id")
    rotate.add_argument("--overlap-seconds", type=int, default=86400, help="0 to 604800 (default: one day)")
    log = _command(hooks, "deliveries", cmd_webhooks_deliveries, "an endpoint's delivery attempts, newest first")
    log.add_argument("webhook_id")
    log.add_argument("--limit", type=int, default=20, help="1 to 100 (default 20)")
    replay = _command(hooks, "replay", cmd_webhooks_replay, "deliver an event again, or every failed one")
    replay.add_argument("webhook_id")
    which = replay.add_mutually_exclusive_group(required=True)
    which.add_argument("--event", dest="event_id", help="the event id (evt_...)")
    which.add_argument("--failed", action="store_true", help="every failed delivery of the endpoint")
    _command(hooks, "test", cmd_webhooks_test, "send a webhook.test event (the server delivers it)").add_argument(
        "webhook_id"
    )


def _storage_overrides(args: argparse.Namespace) -> dict[str, Any]:
    # --db names the database whatever the file says: a URL, or a path (and then no URL).
    given_url = args.db is not None and "://" in args.db
    return {
        "storage_url": args.db if given_url else ("" if args.db is not None else None),
        "storage_path": None if given_url else args.db,
    }


def _config(args: argparse.Namespace) -> Config:
    return load_config(
        args.config,
        **_storage_overrides(args),
        server_host=getattr(args, "host", None),
        server_port=getattr(args, "port", None),
    )


def _with_db(args: argparse.Namespace, action: Callable):
    config = _config(args)
    conn = connect(config.storage.location)
    try:
        if not config.redis.url:
            return action(conn)
        with changes_told(conn, config.redis.url):
            return action(conn)
    finally:
        conn.close()


def _hosts(conn: Connection, config: Config) -> Hosts:
    return Hosts.load(conn, config.short_host, config.links.domains)


def cmd_serve(args: argparse.Namespace) -> None:
    from shortlink.server import serve

    serve(_config(args), workers=args.workers)


def _link_line(link: Link) -> str:
    state = "active" if link.is_active else "paused"
    extras = [state, link.platform.value if link.platform else "", link.source or "", f"{link.click_count} clicks"]
    return f"{link.id}  {link.short_url}  {link.original_url}  " + "  ".join(extra for extra in extras if extra)


def cmd_links_list(args: argparse.Namespace) -> Output:
    query = LinkFilter(
        page=args.page,
        limit=args.limit,
        search=args.search,
        short_code=args.short_code,
        platform=Platform(args.platform) if args.platform else None,
        is_active=args.is_active,
        source=args.source,
        tag=args.tag,
    )
    if not 1 <= query.limit <= 100:
        raise ValidationError("--limit", "must be from 1 to 100")
    if query.page < 1:
        raise ValidationError("--page", "must be at least 1")
    config = _config(args)

    def read(conn: Connection):
        account_id = accounts.account_for(conn, args.email)["id"]
        return service.list_links(conn, account_id, query, _hosts(conn, config).base_for_account(account_id))

    found, pagination = _with_db(args, read)
    text = "\n".join(_link_line(link) for link in found) or "no links"
    footer = f"page {pagination.page} of {max(pagination.pages, 1)}, {pagination.total} links"
    return {"data": found, "pagination": pagination}, f"{text}\n{footer}"


def _owned_link(conn: Connection, config: Config, link_id: str) -> tuple[int, Link]:
    account_id = service.owner_of(conn, link_id)
    return account_id, service.get_link(conn, account_id, link_id, _hosts(conn, config).base_for_account(account_id))


def cmd_links_show(args: argparse.Namespace) -> Output:
    config = _config(args)

    def read(conn: Connection) -> tuple[Link, RulesDocument]:
        account_id, link = _owned_link(conn, config, args.link_id)
        return link, link_rules(conn, account_id, args.link_id)

    link, rules = _with_db(args, read)
    fields = msgspec.to_builtins(link)
    width = max(len(name) for name in fields)
    lines = [f"{name:<{width}}  {'-' if value is None else value}" for name, value in fields.items()]
    # The link's rules (docs/link-rules.md) after the spec's fields, in the JSON as "rules".
    lines += [f"{'rules':<{width}}  {line}" for line in rule_lines(rules) or ["-"]]
    return {**fields, "rules": msgspec.to_builtins(rules)}, "\n".join(lines)


def _confirmed(question: str) -> bool:
    if not sys.stdin.isatty():
        raise ShortlinkError("not on a terminal: add --yes to delete without being asked")
    try:
        return input(f"{terminal_safe(question)} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        raise ShortlinkError("no answer (end of input): add --yes to delete without being asked") from None


def cmd_links_delete(args: argparse.Namespace) -> Output:
    config = _config(args)

    def delete(conn: Connection) -> Link:
        account_id, link = _owned_link(conn, config, args.link_id)
        question = f"Delete {link.short_url} -> {link.original_url} and its {link.click_count} clicks?"
        if not args.yes and not _confirmed(question):
            raise ShortlinkError("not deleted")
        # Through the outbox: the deletion's webhook event is written with it.
        outbox.delete_link(conn, account_id, args.link_id, base=link.short_url.rsplit("/l/", 1)[0], now=utcnow())
        return link

    link = _with_db(args, delete)
    return {"deleted": link.id, "shortUrl": link.short_url}, f"deleted {link.id} ({link.short_url})"


def _webhook_line(hook: Webhook) -> str:
    state = "enabled" if hook.is_enabled else f"DISABLED ({hook.disabled_reason})"
    line = f"{hook.id}  {hook.url}  {' '.join(hook.events)}  {state}"
    if hook.link_ids:
        line += f"  links {','.join(hook.link_ids)}"
    if hook.tags:
        line += f"  tags {','.join(hook.tags)}"
    return line


def cmd_webhooks_list(args: argparse.Namespace) -> Output:
    def listing(conn: Connection) -> list[Webhook]:
        account_id = accounts.account_for(conn, args.email)["id"]
        return webhook_endpoints.list_endpoints(conn, account_id, outbox.millis(utcnow()))

    found = _with_db(args, listing)
    return {"data": found}, "\n".join(_webhook_line(hook) for hook in found) or "no webhook endpoints"


def cmd_webhooks_add(args: argparse.Namespace) -> Output:
    config = _config(args)
    fields = {"url": args.url, "events": args.events, "description": args.description}
    fields |= {"linkIds": args.link_ids, "tags": args.tags}
    try:  # the API's checks of lengths and counts, named as the API names them
        body = msgspec.convert(fields, CreateWebhook)
    except msgspec.ValidationError as exc:
        raise field_error(str(exc)) from None
    # Its host name judged as the API judges it (webhooks.rules.judge_host).
    asyncio.run(webhook_policy.judge_host(body.url, config.fetcher.allow_private_addresses))

    def add(conn: Connection) -> CreatedWebhook:
        account_id = accounts.account_for(conn, args.email)["id"]
        now = utcnow()
        allow_private = config.fetcher.allow_private_addresses
        row = webhook_endpoints.create_endpoint(conn, account_id, body, now=now, allow_private=allow_private)
        shown = webhook_endpoints.to_webhook(row, outbox.millis(now))
        secret = secret_of(webhook_key(load_signing_key(conn, config.storage)), row["secret_nonce"])
        return CreatedWebhook(**msgspec.structs.asdict(shown), secret=secret)

    created = _with_db(args, add)
    return created, f"{_webhook_line(created)}\nsecret (shown once, store it now):\n  {created.secret}"


def _for_owner(args: argparse.Namespace, action: Callable) -> Any:
    """`action(conn, account_id)` for the account of the endpoint `args.webhook_id`."""
    return _with_db(args, lambda conn: action(conn, webhook_endpoints.owner_of(conn, args.webhook_id)))


def cmd_webhooks_remove(args: argparse.Namespace) -> Output:
    _for_owner(args, lambda conn, account: webhook_endpoints.delete_endpoint(conn, account, args.webhook_id))
    return {"deleted": args.webhook_id}, f"deleted {args.webhook_id}"


def cmd_webhooks_rotate(args: argparse.Namespace) -> Output:
    config = _config(args)
    if not 0 <= args.overlap_seconds <= 7 * 86400:
        raise ValidationError("--overlap-seconds", "must be 0 to 604800")

    def rotate(conn: Connection, account_id: int) -> RotatedSecret:
        now = utcnow()
        row = webhook_endpoints.rotate_secret(conn, account_id, args.webhook_id, args.overlap_seconds, now)
        shown = webhook_endpoints.to_webhook(row, outbox.millis(now))
        secret = secret_of(webhook_key(load_signing_key(conn, config.storage)), row["secret_nonce"])
        return RotatedSecret(id=shown.id, secret=secret, previous_secret_valid_until=shown.previous_secret_valid_until)

    rotated = _for_owner(args, rotate)
    until = rotated.previous_secret_valid_until
    old = f"the old one signs too until {until}" if until else "the old one no longer signs"
    return rotated, f"new secret (shown once, store it now):\n  {rotated.secret}\n{old}"


def cmd_webhooks_deliveries(args: argparse.Namespace) -> Output:
    if not 1 <= args.limit <= 100:
        raise ValidationError("--limit", "must be 1 to 100")
    found = _for_owner(
        args, lambda conn, account: webhook_endpoints.attempts(conn, account, args.webhook_id, args.limit, None)
    )
    lines = [
        f"{entry.attempted_at}  {entry.event_id}  {entry.event_type}  {entry.status or '-'}  {entry.latency_ms} ms  "
        f"{entry.delivery_state}  {entry.response[:80]!r}"
        for entry in found
    ]
    return {"data": found}, "\n".join(lines) or "no deliveries yet"


def cmd_webhooks_replay(args: argparse.Namespace) -> Output:
    body = Replay(event_id=args.event_id, failed=args.failed)
    count = _for_owner(
        args, lambda conn, account: webhook_endpoints.replay(conn, account, args.webhook_id, body, utcnow())
    )
    return {"replayed": count}, f"{count} deliveries queued again (the server sends them)"


def cmd_webhooks_test(args: argparse.Namespace) -> Output:
    def test(conn: Connection, account_id: int) -> str:
        return outbox.add_test_event(conn, webhook_endpoints.endpoint_row(conn, account_id, args.webhook_id), utcnow())

    event_id = _for_owner(args, test)
    return {"eventId": event_id}, f"test event {event_id} queued (the server sends it)"


def cmd_accounts_list(args: argparse.Namespace) -> Output:
    found = _with_db(args, accounts.list_accounts)
    lines = [
        f"{account.id}  {account.email}  {'Pro' if account.subscription_active else 'no subscription'}  "
        f"{account.active_keys} keys  {account.links} links  created {account.created_at}"
        for account in found
    ]
    return {"data": found}, "\n".join(lines) or "no accounts"


def cmd_key_create(args: argparse.Namespace) -> Output:
    created = _with_db(args, lambda conn: accounts.create_key(conn, args.email, args.name))
    # The contract: {"key", "keyId", "userId", "email"}, nothing else.
    text = f"API key for {created.email} (shown once, store it now):\n  {created.key}\nkey id: {created.key_id}"
    return created, text


def cmd_key_revoke(args: argparse.Namespace) -> Output:
    _with_db(args, lambda conn: accounts.revoke_key(conn, args.key_id))
    return {"revoked": args.key_id}, f"revoked {args.key_id}"


def cmd_key_list(args: argparse.Namespace) -> Output:
    found = _with_db(args, lambda conn: accounts.list_keys(conn, args.email))
    lines = [
        f"{key.id}  {key.prefix}…  {key.name or '-'}  created {key.created_at}  "
        + (f"revoked {key.revoked_at}" if key.revoked_at else "active")
        for key in found
    ]
    return {"data": found}, "\n".join(lines) or "no keys"


# How a script sets a password: what a prompt that cannot be answered points to.
PASSWORD_FROM_A_SCRIPT = "printf '%s\\n' \"$PASSWORD\" | shortlink account password --email EMAIL --password-stdin"


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    # getpass would read a pipe's first line as the password and end at the second prompt.
    if not sys.stdin.isatty():
        raise ShortlinkError(f"standard input is not a terminal: to pipe the password, use {PASSWORD_FROM_A_SCRIPT}")
    try:
        first = getpass.getpass("New password: ")
        again = getpass.getpass("Again: ")
    except EOFError:
        raise ShortlinkError(
            f"no password typed (end of input): type it twice, or use {PASSWORD_FROM_A_SCRIPT}"
        ) from None
    if again != first:
        raise ValidationError("password", "the two passwords do not match")
    return first


def cmd_account_password(args: argparse.Namespace) -> Output:
    """Ends every dashboard session of the account, as a password change there does."""
    password_hash = passwords.hash_password(_read_password(args.password_stdin))
    account = _with_db(args, lambda conn: sessions.set_password(conn, args.email, password_hash))
    text = f"password set for {account['email']}; its dashboard sessions have been signed out"
    return {"email": account["email"], "userId": account["public_id"]}, text


def cmd_subscription_set(args: argparse.Namespace) -> Output:
    _with_db(args, lambda conn: accounts.set_subscription(conn, args.email, args.active))
    state = "active" if args.active else "inactive"
    return {"email": args.email, "subscriptionActive": args.active}, f"subscription of {args.email}: {state}"


def cmd_domain_add(args: argparse.Namespace) -> Output:
    host = _with_db(args, lambda conn: accounts.add_domain(conn, args.email, args.host))
    return {"host": host, "email": args.email}, f"connected {host} to {args.email}"


def cmd_demo_seed(args: argparse.Namespace) -> Output:
    from shortlink.demo import seed

    with stop_on_interrupt() as stop:
        result = asyncio.run(seed(_config(args), args.email, args.links, args.clicks, args.days, stop=stop))
    text = (
        f"seeded {result.links} links and {result.clicks} clicks "
        f"({result.bots} from bots) for {args.email} over {args.days} days"
    )
    if result.interrupted:
        raise Interrupted(
            f"interrupted: {text}, of {args.links} links and {args.clicks} clicks asked for; those are stored"
        )
    return msgspec.structs.asdict(result) | {"email": args.email, "days": args.days}, text


def cmd_mcp(args: argparse.Namespace) -> None:
    from shortlink.mcp import take_api_key

    key = take_api_key()  # before the SDK loads: a missing key stops at once
    from shortlink.mcp import stdio

    if args.url:
        asyncio.run(stdio.serve_remote(args.url, key))
    else:
        asyncio.run(stdio.serve_local(_config(args), key))


def cmd_migrate(args: argparse.Namespace) -> Output:
    from shortlink.move_to_postgresql import migrate
    from shortlink.storage.postgresql import describe

    if not is_postgresql(args.to):
        raise ConfigError("--to: must be a postgresql://user:password@host:port/database URL")
    storage = _config(args).storage
    if is_postgresql(storage.location):
        raise ShortlinkError("migrate copies an SQLite installation: --db (or [storage]) names PostgreSQL")
    with stop_on_interrupt() as stop:
        result = migrate(sqlite_path(storage.location), args.to, replace=args.replace, stop=stop)
    value = {
        "to": describe(args.to),
        "rows": result.counts,
        "seconds": round(result.seconds, 1),
        "verified": {"answers": result.answers, "accounts": result.accounts, "links": result.links},
    }
    return value, (
        f"copied {result.rows:,} rows of {len(result.counts)} tables to {describe(args.to)} in {result.seconds:.1f} s\n"
        f"verified: every table holds as many rows as the source, and {result.answers} analytics answers "
        f"({result.accounts} accounts and {result.links} links over {result.ranges} ranges) are equal\n"
        "next: stop the servers, set [storage] url to the database (SHORTLINK_STORAGE_URL), start them"
    )


def _printable(text: str) -> str:
    """Text from a file, safe on a terminal: control and format characters escaped."""
    return "".join(char if char.isprintable() else f"\\u{ord(char):04x}" for char in text)


def _outcome_line(outcome: Outcome) -> str:
    where = f"line {outcome.line}" + (f", row {outcome.row} of its INSERT" if outcome.row else "")
    parts = [f"{where}: {outcome.action}"]
    if outcome.code:
        parts.append(outcome.code)
    if outcome.url:
        parts.append(f"-> {outcome.url}")
    if outcome.visits:
        parts.append(f"with {outcome.visits} clicks")
    text = " ".join(parts) + (f" ({outcome.reason})" if outcome.reason else "")
    return _printable(text)


def cmd_import(args: argparse.Namespace) -> Output:
    from shortlink.application.imports import run_import
    from shortlink.imports import generic, yourls
    from shortlink.imports.rows import FileError

    history = None
    try:
        if args.source == "yourls" and args.file != "-" and yourls.is_dump(Path(args.file)):
            # A dump is read a statement at a time: its click log can be far bigger than memory.
            rows, history = yourls.stream(Path(args.file))
        elif args.source == "csv" and args.file != "-":
            rows = generic.read(Path(args.file))  # a record at a time, never the whole file
        else:
            data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
            rows = PARSERS[args.source](data)
    except OSError as exc:
        raise ShortlinkError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    except FileError as exc:
        raise ShortlinkError(_printable(f"{args.file} is not a {args.source} export: {exc}")) from None
    if args.clicks:
        from shortlink.imports import clicks

        try:
            rows = clicks.attach(rows, clicks.parse(Path(args.clicks).read_bytes()))
        except OSError as exc:
            raise ShortlinkError(f"cannot read {args.clicks}: {exc.strerror or exc}") from None
        except FileError as exc:
            raise ShortlinkError(_printable(f"{args.clicks}: {exc}")) from None
    config = _config(args)
    with (
        stop_on_interrupt() as stop,
        progress("import", 0 if args.dry_run else len(rows), "rows") as done,
        # The click pass's count on a terminal (its total is known only once the log is read).
        progress("import: clicks", 0, "clicks", tty_only=True) as clicks_done,
    ):
        report = asyncio.run(
            run_import(
                config,
                args.email,
                args.source,
                rows,
                policy=args.on_conflict,
                dry_run=args.dry_run,
                on_rows=done.advance,
                stop=stop,
                history=history,
                on_clicks=(lambda _count: None) if args.json else clicks_done.advance,
            )
        )
    lines = [_outcome_line(outcome) for outcome in report.rows]
    verb = "would create" if report.dry_run else "created"
    summary = (
        f"{verb} {report.created} links with {report.visits} clicks; {report.unchanged} unchanged, "
        f"{report.skipped} skipped, {report.errors} refused"
    )
    if not report.dry_run and not report.applied:
        summary = f"nothing imported: a code conflicts and --on-conflict is fail; {summary.split('; ', 1)[1]}"
    text = "\n".join([*lines, summary])
    if report.interrupted:
        raise Interrupted(f"interrupted: {summary}; the rows not reached were not imported")
    if report.errors or (not report.dry_run and not report.applied):
        raise Unhealthy(report, text)
    return report, text


def cmd_export(args: argparse.Namespace) -> None:
    from shortlink.analytics import rawclicks
    from shortlink.application.imports import csv_lines, export_records

    if (args.start or args.end) and not args.clicks:
        raise ValidationError("--from", "goes with --clicks")
    start_ms, end_ms = rawclicks.click_range(args.start, args.end)

    def write(conn: Connection) -> None:
        account_id = accounts.account_for(conn, args.email)["id"]
        if args.clicks:
            sys.stdout.writelines(rawclicks.lines(conn, account_id, start_ms, end_ms))
            return
        records = export_records(conn, account_id)
        if args.format == "csv":
            sys.stdout.writelines(csv_lines(records))
        else:
            sys.stdout.writelines(msgspec.json.encode(record).decode() + "\n" for record in records)

    try:
        _with_db(args, write)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped early (`| head`): nothing is wrong, and nothing more to say.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def cmd_backup(args: argparse.Namespace) -> Output:
    destination = Path(args.path)
    if destination.exists():
        raise ShortlinkError(f"{args.path} exists; choose a new file")
    storage = _config(args).storage
    if storage.url and not storage.url.startswith("sqlite:"):
        raise ShortlinkError("backup copies an SQLite database; back PostgreSQL up with pg_dump")
    source = sqlite_path(storage.location)
    if not Path(source).is_file():  # opening it would create an empty database to copy
        raise ShortlinkError(f"no database at {source}")

    def copy(conn: sqlite3.Connection) -> int:
        with stop_on_interrupt() as stop, progress("backup", 0, "pages") as copied:

            def step(done: int, total: int) -> None:
                copied.set_total(total)
                copied.advance(done - copied.done)
                stop.check()  # between two steps: the unfinished copy is removed

            backup(conn, destination, step)
            return copied.total

    try:
        pages = _with_db(args, copy)
    except Interrupted:
        raise Interrupted(f"interrupted: no backup written to {args.path}") from None
    except (sqlite3.Error, OSError) as exc:
        raise ShortlinkError(f"backup to {args.path} failed: {exc}") from None
    size = destination.stat().st_size
    return {"path": str(destination), "pages": pages, "bytes": size}, f"backed up to {args.path}"


def cmd_doctor(args: argparse.Namespace) -> Output:
    from shortlink.doctor import diagnose

    report = diagnose(args.config, os.environ, via=args.via, **_storage_overrides(args))
    lines = [f"configuration file: {report.config_file}"]
    width = max((len(setting.key) for setting in report.settings), default=0)
    lines += [f"  {s.key:<{width}}  {json.dumps(s.value)}  ({s.origin})" for s in report.settings]
    lines += [f"{name}: {json.dumps(value)}" for name, value in report.facts.items()]
    lines += [f"{f.severity.upper()} [{f.check}] {f.message} -> {f.fix}" for f in report.findings]
    problems = sum(finding.severity == "problem" for finding in report.findings)
    lines.append("healthy" if report.healthy else f"{problems} problem{'s' if problems > 1 else ''} found")
    result = msgspec.to_builtins(report) | {"healthy": report.healthy}
    if not report.healthy:
        raise Unhealthy(result, "\n".join(lines))
    return result, "\n".join(lines)


def _app_commands(commands) -> None:
    app = _group(commands, "app", "apps the association files name (deep links into your own app)")
    add = _command(app, "add", cmd_app_add, "register an iOS and/or Android app")
    add.add_argument("--email", help="the account (its custom domains); without: the service's app, on the short host")
    add.add_argument("--name")
    add.add_argument("--ios-team-id", help="Apple team id (10 characters A-Z 0-9)")
    add.add_argument("--ios-bundle-id", help="reverse-DNS bundle id")
    add.add_argument("--ios-app-store-id", help="the App Store's numeric id")
    add.add_argument("--ios-path", action="append", help="a path the iOS app opens (repeatable; default /l/*)")
    add.add_argument("--android-package", help="the Android application id")
    add.add_argument(
        "--android-sha256", action="append", metavar="FP", help="a signing-certificate SHA-256 fingerprint (repeatable)"
    )
    add.add_argument("--android-path", action="append", help="a path the Android app opens (repeatable; default /l/*)")
    listing = _command(app, "list", cmd_app_list, "list the apps of an account, or of the service")
    listing.add_argument("--email", help="the account; without: the service's own apps")
    listing.add_argument("--all", action="store_true", help="every app of every account and of the service")
    remove = _command(app, "remove", cmd_app_remove, "remove an app by its id")
    remove.add_argument("app_id", metavar="ID")
    remove.add_argument("--email", help="the account; without: the service's own apps")


def _app_owner(conn: Connection, email: str | None) -> int | None:
    return None if email is None else accounts.account_for(conn, email)["id"]


def _app_line(app: Any, owner: str | None = None) -> str:
    parts = [app.id, app.name or "-"]
    if app.ios:
        parts.append(f"ios {app.ios.team_id}.{app.ios.bundle_id} {' '.join(app.ios.paths)}")
    if app.android:
        parts.append(f"android {app.android.package} ({len(app.android.sha256_fingerprints)} fingerprints)")
    if owner is not None:
        parts.append(owner)
    return "  ".join(parts)


def cmd_app_add(args: argparse.Namespace) -> Output:
    from shortlink.applinks.schema import AndroidApp, CreateApp, IosApp, validate_app
    from shortlink.applinks.service import create_app
    from shortlink.times import utcnow

    ios = android = None
    if args.ios_team_id is not None or args.ios_bundle_id is not None:
        if args.ios_team_id is None or args.ios_bundle_id is None:
            raise ValidationError("--ios-team-id/--ios-bundle-id", "an iOS app needs both")
        ios = IosApp(team_id=args.ios_team_id, bundle_id=args.ios_bundle_id, app_store_id=args.ios_app_store_id)
        if args.ios_path:
            ios.paths = args.ios_path
    if args.android_package is not None or args.android_sha256:
        if args.android_package is None or not args.android_sha256:
            raise ValidationError("--android-package/--android-sha256", "an Android app needs both")
        android = AndroidApp(package=args.android_package, sha256_fingerprints=args.android_sha256)
        if args.android_path:
            android.paths = args.android_path
    body = validate_app(CreateApp(name=args.name, ios=ios, android=android))
    app = _with_db(args, lambda conn: create_app(conn, _app_owner(conn, args.email), body, utcnow()))
    where = f"the custom domains of {args.email}" if args.email else "the short host"
    return msgspec.to_builtins(app), f"registered {_app_line(app)}; named on {where}"


def cmd_app_list(args: argparse.Namespace) -> Output:
    from shortlink.applinks import service as apps

    if args.all:
        found = _with_db(args, apps.all_apps)
        value = [msgspec.to_builtins(app) | {"email": email} for email, app in found]
        return {"data": value}, "\n".join(_app_line(app, email or "(service)") for email, app in found) or "no apps"
    listed = _with_db(args, lambda conn: apps.list_apps(conn, _app_owner(conn, args.email)))
    return {"data": msgspec.to_builtins(listed)}, "\n".join(_app_line(app) for app in listed) or "no apps"


def cmd_app_remove(args: argparse.Namespace) -> Output:
    from shortlink.applinks.service import remove_app

    _with_db(args, lambda conn: remove_app(conn, _app_owner(conn, args.email), args.app_id))
    return {"id": args.app_id, "deleted": True}, f"removed {args.app_id}"


def _print_json(value: Any) -> None:
    sys.stdout.write(msgspec.json.encode(value).decode() + "\n")


def _fail(args: argparse.Namespace, code: str, message: str, exit_code: int) -> int:
    print(f"shortlink: {terminal_safe(message)}", file=sys.stderr)
    if getattr(args, "json", False):
        _print_json({"error": {"code": code, "message": message}})
    return exit_code


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    exit_code = EXIT_OK
    try:
        output = args.run(args)
    except Unhealthy as unhealthy:
        output, exit_code = unhealthy.output, EXIT_USAGE
    except ConfigError as exc:
        return _fail(args, "CONFIGURATION", str(exc), EXIT_USAGE)
    except NotFoundError as exc:
        return _fail(args, exc.code, exc.message, EXIT_NOT_FOUND)
    except ShortlinkError as exc:
        # A plain ShortlinkError is the CLI refusing (a file exists, no --yes...).
        return _fail(args, "REFUSED" if type(exc) is ShortlinkError else exc.code, exc.message, EXIT_USAGE)
    except Interrupted as exc:
        return _fail(args, "INTERRUPTED", str(exc) or "interrupted", INTERRUPTED_EXIT_CODE)
    if output is not None:
        value, text = output
        if args.json:
            _print_json(value)  # JSON escapes control characters itself
        else:
            # Stored text (e-mails, names, titles, URLs) may predate the rules refusing
            # control characters: a terminal is never handed one raw.
            print(terminal_safe(text))
    return exit_code
