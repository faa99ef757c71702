"""`shortlink links`: list, show and delete the links of any account, and change where one goes."""

from __future__ import annotations

import argparse

import msgspec

from shortlink.accounts import service as accounts
from shortlink.cli.common import Output, command, command_group, config_of, confirmed, hosts_of, with_db
from shortlink.config import Config
from shortlink.errors import ShortlinkError, ValidationError
from shortlink.link_rules.describe import rule_lines
from shortlink.link_rules.schema import Destination, RulesDocument
from shortlink.link_rules.service import destination, link_rules, send_everyone
from shortlink.links import service
from shortlink.links.platforms import Platform
from shortlink.links.public import blocked_hosts
from shortlink.links.schema import Link, LinkFilter
from shortlink.storage import Connection
from shortlink.times import utcnow
from shortlink.webhooks import outbox

SOURCES = ("DASHBOARD", "API", "MCP", "PUBLIC", "BIO")


def register(commands) -> None:
    links = command_group(commands, "links", "links of any account")
    listing = command(links, "list", run_list, "list an account's links, newest first (the API's filters)")
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
    show = command(links, "show", run_show, "show one link")
    show.add_argument("link_id", metavar="ID")
    moving = command(
        links, "destination", run_destination, "where a link's visitors go: show it, send everyone elsewhere, or back"
    )
    moving.add_argument("link_id", metavar="ID")
    moving.add_argument("url", metavar="URL", nargs="?", help="send everyone here from now on")
    moving.add_argument("--clear", action="store_true", help="send them to the link's originalUrl again")
    delete = command(links, "delete", run_delete, "delete a link with its clicks (asks first)")
    delete.add_argument("link_id", metavar="ID")
    delete.add_argument("--yes", action="store_true", help="do not ask (needed when not on a terminal)")


def _link_line(link: Link) -> str:
    state = "active" if link.is_active else "paused"
    extras = [state, link.platform.value if link.platform else "", link.source or "", f"{link.click_count} clicks"]
    return f"{link.id}  {link.short_url}  {link.original_url}  " + "  ".join(extra for extra in extras if extra)


def run_list(args: argparse.Namespace) -> Output:
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
    config = config_of(args)

    def read(conn: Connection):
        account_id = accounts.account_for(conn, args.email)["id"]
        return service.list_links(conn, account_id, query, hosts_of(conn, config).base_for_account(account_id))

    found, pagination = with_db(args, read)
    text = "\n".join(_link_line(link) for link in found) or "no links"
    footer = f"page {pagination.page} of {max(pagination.pages, 1)}, {pagination.total} links"
    return {"data": found, "pagination": pagination}, f"{text}\n{footer}"


def _owned_link(conn: Connection, config: Config, link_id: str) -> tuple[int, Link]:
    account_id = service.owner_of(conn, link_id)
    return account_id, service.get_link(conn, account_id, link_id, hosts_of(conn, config).base_for_account(account_id))


def run_show(args: argparse.Namespace) -> Output:
    config = config_of(args)

    def read(conn: Connection) -> tuple[Link, RulesDocument]:
        account_id, link = _owned_link(conn, config, args.link_id)
        return link, link_rules(conn, account_id, args.link_id)

    link, rules = with_db(args, read)
    fields = msgspec.to_builtins(link)
    width = max(len(name) for name in fields)
    lines = [f"{name:<{width}}  {'-' if value is None else value}" for name, value in fields.items()]
    # The link's rules (docs/link-rules.md) after the spec's fields, in the JSON as "rules".
    lines += [f"{'rules':<{width}}  {line}" for line in rule_lines(rules) or ["-"]]
    return {**fields, "rules": msgspec.to_builtins(rules)}, "\n".join(lines)


def run_destination(args: argparse.Namespace) -> Output:
    if args.url is not None and args.clear:
        raise ValidationError("--clear", "give a URL or --clear, not both")
    config = config_of(args)

    def change(conn: Connection) -> Destination:
        account_id = service.owner_of(conn, args.link_id)
        if args.url is None and not args.clear:
            return destination(conn, account_id, args.link_id)
        found, _ = send_everyone(
            conn,
            account_id,
            args.link_id,
            args.url,
            door="cli",
            is_ours=hosts_of(conn, config).is_ours,
            blocked=blocked_hosts(config.public.blocked_hosts),
        )
        return found

    found = with_db(args, change)
    where = "the address it was created for" if found.url == found.original_url else f"created for {found.original_url}"
    lines = [f"{args.link_id}: visitors go to {found.url} since {found.since} ({where})"]
    lines += [f"  {change.at}  {change.url}  ({change.door})" for change in found.history]
    return {"data": found}, "\n".join(lines)


def run_delete(args: argparse.Namespace) -> Output:
    config = config_of(args)

    def delete(conn: Connection) -> Link:
        account_id, link = _owned_link(conn, config, args.link_id)
        question = f"Delete {link.short_url} -> {link.original_url} and its {link.click_count} clicks?"
        if not args.yes and not confirmed(question, "delete"):
            raise ShortlinkError("not deleted")
        # Through the outbox: the deletion's webhook event is written with it.
        outbox.delete_link(conn, account_id, args.link_id, base=link.short_url.rsplit("/l/", 1)[0], now=utcnow())
        return link

    link = with_db(args, delete)
    return {"deleted": link.id, "shortUrl": link.short_url}, f"deleted {link.id} ({link.short_url})"
