"""`shortlink accounts`, `key`, `account` and `subscription`: accounts and what is theirs (API
keys, the dashboard password, the Pro subscription); their custom domains are `domains.py`'s."""

from __future__ import annotations

import argparse
import getpass
import sys

from shortlink.accounts import passwords, sessions
from shortlink.accounts import service as accounts
from shortlink.cli.common import Output, command, command_group, with_db
from shortlink.errors import ShortlinkError, ValidationError

# How a script sets a password: what a prompt that cannot be answered points to.
PASSWORD_FROM_A_SCRIPT = "printf '%s\\n' \"$PASSWORD\" | shortlink account password --email EMAIL --password-stdin"


def register(commands) -> None:
    account_commands = command_group(commands, "accounts", "accounts")
    command(account_commands, "list", run_accounts_list, "list every account")

    key = command_group(commands, "key", "API keys")
    create = command(key, "create", run_key_create, "create a key (and the account, with Pro, if new)")
    create.add_argument("--email", required=True)
    create.add_argument("--name")
    command(key, "revoke", run_key_revoke, "revoke a key by its id").add_argument("key_id")
    command(key, "list", run_key_list, "list an account's keys").add_argument("--email", required=True)

    account = command_group(commands, "account", "an account's dashboard sign-in")
    password = command(
        account,
        "password",
        run_account_password,
        "set the dashboard password (and create the account, with Pro, if new)",
    )
    password.add_argument("--email", required=True)
    password.add_argument("--password-stdin", action="store_true", help="read the password from standard input")

    subscription = command_group(commands, "subscription", "Pro subscriptions")
    set_sub = command(subscription, "set", run_subscription_set, "activate or deactivate an account's subscription")
    set_sub.add_argument("--email", required=True)
    state = set_sub.add_mutually_exclusive_group(required=True)
    state.add_argument("--active", dest="active", action="store_true")
    state.add_argument("--inactive", dest="active", action="store_false")


def run_accounts_list(args: argparse.Namespace) -> Output:
    found = with_db(args, accounts.list_accounts)
    lines = [
        f"{account.id}  {account.email}  {'Pro' if account.subscription_active else 'no subscription'}  "
        f"{account.active_keys} keys  {account.links} links  created {account.created_at}"
        for account in found
    ]
    return {"data": found}, "\n".join(lines) or "no accounts"


def run_key_create(args: argparse.Namespace) -> Output:
    created = with_db(args, lambda conn: accounts.create_key(conn, args.email, args.name))
    # The contract: {"key", "keyId", "userId", "email"}, nothing else.
    text = f"API key for {created.email} (shown once, store it now):\n  {created.key}\nkey id: {created.key_id}"
    return created, text


def run_key_revoke(args: argparse.Namespace) -> Output:
    with_db(args, lambda conn: accounts.revoke_key(conn, args.key_id))
    return {"revoked": args.key_id}, f"revoked {args.key_id}"


def run_key_list(args: argparse.Namespace) -> Output:
    found = with_db(args, lambda conn: accounts.list_keys(conn, args.email))
    lines = [
        f"{key.id}  {key.prefix}…  {key.name or '-'}  created {key.created_at}  "
        + (f"revoked {key.revoked_at}" if key.revoked_at else "active")
        for key in found
    ]
    return {"data": found}, "\n".join(lines) or "no keys"


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


def run_account_password(args: argparse.Namespace) -> Output:
    """Ends every dashboard session of the account, as a password change there does."""
    password_hash = passwords.hash_password(_read_password(args.password_stdin))
    account = with_db(args, lambda conn: sessions.set_password(conn, args.email, password_hash))
    text = f"password set for {account['email']}; its dashboard sessions have been signed out"
    return {"email": account["email"], "userId": account["public_id"]}, text


def run_subscription_set(args: argparse.Namespace) -> Output:
    with_db(args, lambda conn: accounts.set_subscription(conn, args.email, args.active))
    state = "active" if args.active else "inactive"
    return {"email": args.email, "subscriptionActive": args.active}, f"subscription of {args.email}: {state}"
