"""Public shortening: a signed-out visitor's URL becomes a link of the operator's account.

Links are made through the same `Links.create` as every door, with source PUBLIC, no
custom code or password, and an expiry. Abuse resistance, in order: bots and link
previewers make nothing; the API's URL rules, then no link to this service itself, to an
IP address, to a blocked host or to a name resolving to a private address; then a token
bucket per client address (an IPv6 client is its /64), `links_per_hour` tokens refilling
over an hour; then the account's daily limit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from urllib.parse import urlsplit

from shortlink.application.hosts import Hosts
from shortlink.application.links import Links
from shortlink.application.visits import VisitRequest
from shortlink.client_address import client_bucket
from shortlink.config import PublicConfig
from shortlink.errors import RateLimitedError, ValidationError
from shortlink.fetcher.addresses import is_public_address, system_resolver
from shortlink.links import public, validation
from shortlink.links.schema import CreateLink, Link
from shortlink.ratelimit import Limiter
from shortlink.times import to_iso, utcnow
from shortlink.visits.classify import classify

FIELD = "url"
# A public link waits this long at most for its destination's name to resolve.
RESOLVE_SECONDS = 2.0


class PublicShortener:
    def __init__(
        self,
        *,
        config: PublicConfig,
        account_id: int | None,
        links: Links,
        hosts: Hosts,
        limiter: Limiter,
        address: Callable[[VisitRequest], tuple[str, bool]],
    ):
        """`account_id`: the owner of public links (None when public shortening is off);
        `address(request)`: the client address, as the visitor path reads it."""
        self.config, self.account_id = config, account_id
        self.links, self.hosts, self.limiter, self._address = links, hosts, limiter, address
        self.blocked = links.blocked

    @property
    def enabled(self) -> bool:
        return self.account_id is not None

    @property
    def expire_days(self) -> int:
        return self.config.expire_days

    async def shorten(self, url: str, request: VisitRequest) -> Link | None:
        """The new link, or None for a bot or previewer (they are shown the form, never a link).
        Raises ValidationError naming `url`, or RateLimitedError (hourly or daily)."""
        assert self.account_id is not None, "public shortening is off"
        if classify(request.user_agent, request.ch_platform, request.ch_mobile).is_bot:
            return None
        if not url:
            raise ValidationError(FIELD, "is missing: paste the address to shorten")
        validation.validate_url(FIELD, url)
        public.refuse_for_public(FIELD, url, self.hosts.is_ours, self.blocked)
        await _refuse_private_destination(url)
        decision = await self.limiter.take(client_bucket(self._address(request)[0]))
        if not decision.allowed:
            raise RateLimitedError(
                f"{self.limiter.capacity} links an hour from one address; try again later", decision.retry_after
            )
        expires = utcnow() + timedelta(days=self.config.expire_days)
        return await self.links.create(
            self.account_id, CreateLink(original_url=url, expires_at=to_iso(expires)), "PUBLIC"
        )


async def _refuse_private_destination(url: str) -> None:
    """A name that resolves to this machine or a private network ("localhost", a name of
    one's own pointing at 127.0.0.1) is refused as an IP literal would be: it leads to this
    service or to nothing a public link should reach. A name that does not resolve (now)
    is let through: it leads nowhere, and the API takes it too."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    try:
        addresses = await asyncio.wait_for(system_resolver(parts.hostname or "", port), RESOLVE_SECONDS)
    except (OSError, TimeoutError, UnicodeError):
        return
    if not all(is_public_address(address) for address in addresses):
        raise ValidationError(FIELD, public.PRIVATE_DESTINATION)
