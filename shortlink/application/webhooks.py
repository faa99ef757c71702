"""Webhook operations for every door, and the in-memory "who subscribes to clicks" set.

The click recorder asks `clicks_wanted()` per batch: an installation without any endpoint
subscribed to `link.clicked` or `link.cap_reached` (the events a batch writes) writes its click
batches exactly as before. The set is refreshed
after every endpoint change made here and, for changes made by the CLI or another process, by
the deliverer's rounds, or once a second by the server process when another process delivers
(docs/architecture.md, "Wiring")."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from shortlink.application.hosts import Hosts
from shortlink.storage import Database
from shortlink.storage import webhooks as store
from shortlink.times import utcnow
from shortlink.webhooks import endpoints, outbox, policy
from shortlink.webhooks.events import (
    BATCH_EVENTS,
    Attempt,
    CreatedWebhook,
    CreateWebhook,
    Replay,
    RotatedSecret,
    UpdateWebhook,
    Webhook,
)
from shortlink.webhooks.secrets import secret_of


def _nothing() -> None:
    return None


class Webhooks:
    def __init__(
        self,
        *,
        db: Database,
        hosts: Hosts,
        allow_private: bool,
        webhook_key: bytes,
        wake: Callable[[], None] = _nothing,
    ):
        """`webhook_key`: the key of endpoint secrets (secrets.webhook_key); `wake()`: tell
        whoever delivers that there is something to send."""
        self.db, self.hosts, self.allow_private, self.wake = db, hosts, allow_private, wake
        self.webhook_key = webhook_key
        self.click_accounts: frozenset[int] = frozenset()

    def clicks_wanted(self) -> bool:
        return bool(self.click_accounts)

    async def refresh_subscribers(self) -> None:
        accounts: set[int] = set()
        for event_type in BATCH_EVENTS:
            accounts.update(await self.db.read(store.subscribing_accounts, event_type))
        self.click_accounts = frozenset(accounts)

    async def create(self, account_id: int, body: CreateWebhook) -> CreatedWebhook:
        await policy.judge_host(body.url, self.allow_private)  # a name judged off the writer thread
        now = utcnow()
        row = await self.db.write(
            endpoints.create_endpoint, account_id, body, now=now, allow_private=self.allow_private
        )
        await self.refresh_subscribers()
        shown = endpoints.to_webhook(row, outbox.millis(now))
        return CreatedWebhook(**msgspec.structs.asdict(shown), secret=secret_of(self.webhook_key, row["secret_nonce"]))

    async def all(self, account_id: int) -> list[Webhook]:
        return await self.db.read(endpoints.list_endpoints, account_id, outbox.millis(utcnow()))

    async def get(self, account_id: int, webhook_id: str) -> Webhook:
        row = await self.db.read(endpoints.endpoint_row, account_id, webhook_id)
        return endpoints.to_webhook(row, outbox.millis(utcnow()))

    async def update(self, account_id: int, webhook_id: str, patch: UpdateWebhook) -> Webhook:
        if isinstance(patch.url, str):
            await policy.judge_host(patch.url, self.allow_private)
        webhook = await self.db.write(
            endpoints.update_endpoint, account_id, webhook_id, patch, now=utcnow(), allow_private=self.allow_private
        )
        await self.refresh_subscribers()
        self.wake()  # a re-enabled endpoint's pending deliveries are due
        return webhook

    async def delete(self, account_id: int, webhook_id: str) -> None:
        await self.db.write(endpoints.delete_endpoint, account_id, webhook_id)
        await self.refresh_subscribers()

    async def rotate(self, account_id: int, webhook_id: str, overlap_seconds: int) -> RotatedSecret:
        now = utcnow()
        row = await self.db.write(endpoints.rotate_secret, account_id, webhook_id, overlap_seconds, now)
        shown = endpoints.to_webhook(row, outbox.millis(now))
        return RotatedSecret(
            id=shown.id,
            secret=secret_of(self.webhook_key, row["secret_nonce"]),
            previous_secret_valid_until=shown.previous_secret_valid_until,
        )

    async def attempts(self, account_id: int, webhook_id: str, limit: int, before: int | None) -> list[Attempt]:
        return await self.db.read(endpoints.attempts, account_id, webhook_id, limit, before)

    async def replay(self, account_id: int, webhook_id: str, body: Replay) -> int:
        count = await self.db.write(endpoints.replay, account_id, webhook_id, body, utcnow())
        self.wake()
        return count

    async def send_test(self, account_id: int, webhook_id: str) -> str:
        row = await self.db.read(endpoints.endpoint_row, account_id, webhook_id)
        event_id = await self.db.write(outbox.add_test_event, row, utcnow())
        self.wake()
        return event_id
