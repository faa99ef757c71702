"""The service's own hosts: the one place that answers "is this host ours, whose is
it, and what base URL do short links show on it"."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from shortlink.links.platforms import host_name, site_of
from shortlink.storage import Connection
from shortlink.storage import accounts as account_store
from shortlink.storage import domains as domain_store

# The verified custom domains with their accounts, and the redirects chosen for some of them.
Snapshot = tuple[list[tuple[str, int]], dict[str, tuple[str | None, str | None]]]


class Hosts:
    """The short host, the `[links] domains` and the verified custom domains.

    Custom domains change at run time (`shortlink domain add`, an account's verified domain);
    `replace_custom_domains` swaps them in whole, so every answer comes from one consistent set.
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
        self._redirects: dict[str, tuple[str | None, str | None]] = {}
        self.replace_custom_domains(custom_domains)

    @classmethod
    def load(cls, conn: Connection, short_host: str, configured_domains: Iterable[str]) -> Hosts:
        hosts = cls(short_host, configured_domains)
        hosts.replace(cls.read(conn))
        return hosts

    @staticmethod
    def read(conn: Connection) -> Snapshot:
        return account_store.all_domains(conn), domain_store.redirects(conn)

    def replace(self, snapshot: Snapshot) -> bool:
        """`read`'s answer swapped in; returns whether an account's short URL base changed."""
        domains, self._redirects = snapshot
        return self.replace_custom_domains(domains)

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

    def is_service_host(self, host: str) -> bool:
        """Whether `host` is the short host or a [links] domain (or its "www.")."""
        return site_of(host) in {site_of(name) for name in self._configured_names}

    def allows_certificate(self, host: str) -> bool:
        """Whether a TLS certificate may be issued for `host` (Caddy's on-demand `ask`): exactly a
        name we serve, so that nobody can make the proxy ask a CA for names we don't."""
        name = host_name(host)
        return name in self._configured_names or name in self._domain_owner

    def root_redirect(self, host: str) -> str | None:
        """Where `/` sends visitors on this custom domain, when its account chose a place."""
        return self._redirects.get(host_name(host), (None, None))[0] if self._redirects else None

    def not_found_redirect(self, host: str) -> str | None:
        """Where an unknown code sends visitors on this custom domain, when chosen."""
        return self._redirects.get(host_name(host), (None, None))[1] if self._redirects else None

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
