"""`shortlink domain`: the custom domains of any account. `add` connects one as the operator
(verified at once: the operator vouches for it); `list`, `verify` and `remove` reach the domains
accounts connected themselves too, through the same domain functions as the API's /domains."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from shortlink.accounts import service as accounts
from shortlink.cli.common import Output, Unhealthy, command, command_group, config_of, confirmed, with_db
from shortlink.domains import service
from shortlink.domains.schema import Domain
from shortlink.errors import NotFoundError, ShortlinkError
from shortlink.storage import Connection, Row


def register(commands) -> None:
    domain = command_group(commands, "domain", "custom domains")
    add = command(domain, "add", run_add, "connect a custom domain to an account")
    add.add_argument("--email", required=True)
    add.add_argument("host")
    listing = command(domain, "list", run_list, "list an account's domains, verified or waiting for their record")
    listing.add_argument("--email", required=True)
    verify = command(domain, "verify", run_verify, "look for a domain's DNS record now (exit 1 when not verified)")
    verify.add_argument("name", metavar="HOST|ID")
    verify.add_argument("--email", help="only a domain of this account")
    remove = command(domain, "remove", run_remove, "remove a domain (asks first); its links stay on the short host")
    remove.add_argument("name", metavar="HOST|ID")
    remove.add_argument("--yes", action="store_true", help="do not ask (needed when not on a terminal)")


def _state(domain: Domain) -> str:
    if domain.verified:
        return "verified" if domain.verification else "verified (added by the operator)"
    state = "not verified"
    if domain.verification:
        record = domain.verification
        state += f': needs {record.type} {record.name} "{record.value}"'
    if domain.check_error:
        state += f"; last check: {domain.check_error}"
    return state


def _domain_line(domain: Domain) -> str:
    return f"{domain.id}  {domain.name}  {_state(domain)}"


def run_add(args: argparse.Namespace) -> Output:
    host = with_db(args, lambda conn: accounts.add_domain(conn, args.email, args.host))
    return {"host": host, "email": args.email}, f"connected {host} to {args.email}"


def run_list(args: argparse.Namespace) -> Output:
    def read(conn: Connection) -> list[Domain]:
        return service.list_domains(conn, accounts.account_for(conn, args.email)["id"])

    found = with_db(args, read)
    return {"data": found}, "\n".join(_domain_line(domain) for domain in found) or "no domains"


def _named(conn: Connection, args: argparse.Namespace) -> Row:
    row = service.named(conn, args.name)
    email = getattr(args, "email", None)
    if email is not None and row["account_id"] != accounts.account_for(conn, email)["id"]:
        raise NotFoundError(f"{email} has no domain {args.name}")
    return row


def run_verify(args: argparse.Namespace) -> Output:
    # Imported by the one command that looks DNS up: dnspython's import is slow for every other.
    from shortlink.domains.check import check

    nameservers = config_of(args).domains.nameservers

    def verify(conn: Connection) -> Domain:
        row = _named(conn, args)
        if row["token"] is not None:  # the operator's domains have no record to look for

            async def write(fn: Any, *fn_args: Any) -> Any:
                return fn(conn, *fn_args)

            asyncio.run(check(row, nameservers, write))
        return service.to_domain(service.domain_row(conn, row["account_id"], row["public_id"]))

    domain = with_db(args, verify)
    output = domain, f"{domain.name} ({domain.id}): {_state(domain)}"
    if not domain.verified:
        raise Unhealthy(*output)
    return output


def run_remove(args: argparse.Namespace) -> Output:
    def remove(conn: Connection) -> Domain:
        row = _named(conn, args)
        domain = service.to_domain(row)
        owner = accounts.account_by_id(conn, row["account_id"])["email"]
        question = f"Remove {domain.name} from {owner}? Its links are then served on the short host only."
        if not args.yes and not confirmed(question, "remove"):
            raise ShortlinkError("not removed")
        service.remove(conn, row["account_id"], domain.id)
        return domain

    domain = with_db(args, remove)
    return {"id": domain.id, "deleted": True}, f"removed {domain.name} ({domain.id})"
