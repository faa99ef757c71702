"""`shortlink webhooks`: the webhook endpoints of any account (docs/webhooks.md)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from typing import Any

import msgspec

from shortlink.accounts import service as accounts
from shortlink.cli.common import Output, command, command_group, config_of, with_db
from shortlink.errors import ValidationError, field_error
from shortlink.keyfile import load_signing_key
from shortlink.storage import Connection
from shortlink.times import utcnow
from shortlink.webhooks import endpoints as webhook_endpoints
from shortlink.webhooks import outbox
from shortlink.webhooks import policy as webhook_policy
from shortlink.webhooks.events import CreatedWebhook, CreateWebhook, Replay, RotatedSecret, Webhook
from shortlink.webhooks.secrets import secret_of, webhook_key


def register(commands) -> None:
    hooks = command_group(commands, "webhooks", "webhook endpoints of any account (docs/webhooks.md)")
    command(hooks, "list", run_list, "list an account's webhook endpoints").add_argument("--email", required=True)
    add = command(hooks, "add", run_add, "add an endpoint; prints its secret (shown once)")
    add.add_argument("url", metavar="URL")
    add.add_argument("--email", required=True)
    add.add_argument("--event", dest="events", action="append", required=True, help="an event type (repeatable)")
    add.add_argument("--link", dest="link_ids", action="append", help="limit it to this link id (repeatable)")
    add.add_argument("--tag", dest="tags", action="append", help="limit it to links with this tag (repeatable)")
    add.add_argument("--description")
    command(hooks, "remove", run_remove, "delete an endpoint and its log").add_argument("webhook_id")
    rotate = command(hooks, "rotate", run_rotate, "a new secret; the old one signs too for a while")
    rotate.add_argument("webhook_id")
    rotate.add_argument("--overlap-seconds", type=int, default=86400, help="0 to 604800 (default: one day)")
    log = command(hooks, "deliveries", run_deliveries, "an endpoint's delivery attempts, newest first")
    log.add_argument("webhook_id")
    log.add_argument("--limit", type=int, default=20, help="1 to 100 (default 20)")
    replay = command(hooks, "replay", run_replay, "deliver an event again, or every failed one")
    replay.add_argument("webhook_id")
    which = replay.add_mutually_exclusive_group(required=True)
    which.add_argument("--event", dest="event_id", help="the event id (evt_...)")
    which.add_argument("--failed", action="store_true", help="every failed delivery of the endpoint")
    command(hooks, "test", run_test, "send a webhook.test event (the server delivers it)").add_argument("webhook_id")


def _webhook_line(hook: Webhook) -> str:
    state = "enabled" if hook.is_enabled else f"DISABLED ({hook.disabled_reason})"
    line = f"{hook.id}  {hook.url}  {' '.join(hook.events)}  {state}"
    if hook.link_ids:
        line += f"  links {','.join(hook.link_ids)}"
    if hook.tags:
        line += f"  tags {','.join(hook.tags)}"
    return line


def run_list(args: argparse.Namespace) -> Output:
    def listing(conn: Connection) -> list[Webhook]:
        account_id = accounts.account_for(conn, args.email)["id"]
        return webhook_endpoints.list_endpoints(conn, account_id, outbox.millis(utcnow()))

    found = with_db(args, listing)
    return {"data": found}, "\n".join(_webhook_line(hook) for hook in found) or "no webhook endpoints"


def run_add(args: argparse.Namespace) -> Output:
    config = config_of(args)
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

    created = with_db(args, add)
    return created, f"{_webhook_line(created)}\nsecret (shown once, store it now):\n  {created.secret}"


def _for_owner(args: argparse.Namespace, action: Callable) -> Any:
    """`action(conn, account_id)` for the account of the endpoint `args.webhook_id`."""
    return with_db(args, lambda conn: action(conn, webhook_endpoints.owner_of(conn, args.webhook_id)))


def run_remove(args: argparse.Namespace) -> Output:
    _for_owner(args, lambda conn, account: webhook_endpoints.delete_endpoint(conn, account, args.webhook_id))
    return {"deleted": args.webhook_id}, f"deleted {args.webhook_id}"


def run_rotate(args: argparse.Namespace) -> Output:
    config = config_of(args)
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


def run_deliveries(args: argparse.Namespace) -> Output:
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


def run_replay(args: argparse.Namespace) -> Output:
    body = Replay(event_id=args.event_id, failed=args.failed)
    count = _for_owner(
        args, lambda conn, account: webhook_endpoints.replay(conn, account, args.webhook_id, body, utcnow())
    )
    return {"replayed": count}, f"{count} deliveries queued again (the server sends them)"


def run_test(args: argparse.Namespace) -> Output:
    def test(conn: Connection, account_id: int) -> str:
        return outbox.add_test_event(conn, webhook_endpoints.endpoint_row(conn, account_id, args.webhook_id), utcnow())

    event_id = _for_owner(args, test)
    return {"eventId": event_id}, f"test event {event_id} queued (the server sends it)"
