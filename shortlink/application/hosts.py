"""The service's own hosts: the one place that answers "is this host ours, whose is
it, and what base URL do short links show on it"."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from shortlink.links.platforms import host_name, site_of
from shortlink.storage import Connection
from shortlink.storage import accounts as account_store


class Hosts:
    """The short host, the `[links] domains` and the connected custom domains.

    Custom domains change at run time (`shortlink domain add`); `replace_custom_domains`
    swaps them in whole, so every answer comes from one consistent set.
    """

    def __init__(
        self, short_host: str, configured_domains: Iterable[str] = (), custom_domains: Iterable[tuple[str, int]] = ()
    ):
        self.short_host = short_host
        self.scheme = urlsplit(short_host).scheme
        # "host[:port]" as configured: the short host and [links] domains.
        self.configured = frozenset({urlsplit(short_host).netloc, *configured_domains})
        self._configured_names = frozenset(host_name(host) for host in self.configured)
        self._primary_domain: dict[int, str] = {}
        self.replace_custom_domains(custom_domains)

    @classmethod
    def load(cls, conn: Connection, short_host: str, configured_domains: Iterable[str]) -> Hosts:
        return cls(short_host, configured_domains, account_store.all_domains(conn))

    def replace_custom_domains(self, domains: Iterable[tuple[str, int]]) -> bool:
        """(host, account id) pairs, the account's first-connected domain first; returns
        whether an account's short URL base changed."""
        owners: dict[str, int] = {}
        primary: dict[int, str] = {}
        for host, account_id in domains:
            owners[host] = account_id
            primary.setdefault(account_id, host)
        changed = primary != self._primary_domain
        self._domain_owner, self._primary_domain = owners, primary
        self._sites = frozenset(site_of(host) for host in (*self.configured, *owners))
        return changed

    def all(self) -> frozenset[str]:
        """Every host entry ("host[:port]"), for the fetcher's refusal list."""
        return frozenset({*self.configured, *self._domain_owner})

    def is_ours(self, host: str) -> bool:
        """Whether `host` is one of ours, whatever its case, trailing dot, port or "www."."""
        return bool(host) and site_of(host) in self._sites

    def is_custom(self, host: str) -> bool:
        """Whether `host` is a connected custom domain (not the short host or a [links] domain)."""
        return bool(self._domain_owner) and host_name(host) in self._domain_owner

    def serves(self, account_id: int, host: str) -> bool:
        """Whether a link of this account resolves on this host: a custom domain shows only
        its own account's links; every other host shows every link."""
        if not self._domain_owner:  # the usual case: no custom domain, nothing to normalise
            return True
        # host_name: "links.brand.com." is the same custom domain, not a way around it.
        owner = self._domain_owner.get(host_name(host))
        return owner is None or owner == account_id

    def base_for_visitor(self, host: str) -> str:
        """Short URLs shown to a visitor stay on the host they came through, when it is ours."""
        name = host_name(host)
        if name in self._configured_names or name in self._domain_owner:
            return f"{self.scheme}://{host}"
        return self.short_host

    def base_for_account(self, account_id: int) -> str:
        """The account's custom domain when it has one, else the service's short host."""
        domain = self._primary_domain.get(account_id)
        return self.short_host if domain is None else f"{self.scheme}://{domain}"

    def owner_of(self, host: str) -> int | None:
        """The account whose custom domain `host` is; None for the service's own hosts (and
        any other host, which shows every link)."""
        return self._domain_owner.get(host_name(host)) if self._domain_owner else None
