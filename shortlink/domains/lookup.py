"""The TXT lookup that proves a domain: a real resolver (dnspython), the system's unless
`[domains] nameservers` names others."""

from __future__ import annotations

import dns.asyncresolver
import dns.exception
import dns.nameserver
import dns.resolver

from shortlink.config import nameserver_address

LOOKUP_SECONDS = 5.0


class LookupFailed(Exception):
    """No answer either way (timeout, no nameserver answered): the state is left as it is."""


async def txt_values(name: str, nameservers: list[str]) -> list[str]:
    """The TXT strings at `name` (each record's strings joined); [] when there is none."""
    try:
        resolver = dns.asyncresolver.Resolver(configure=not nameservers)
    except dns.resolver.NoResolverConfiguration:
        raise LookupFailed("the system has no nameserver configured ([domains] nameservers)") from None
    if nameservers:
        resolver.nameservers = [dns.nameserver.Do53Nameserver(*nameserver_address(entry)) for entry in nameservers]
    resolver.lifetime = LOOKUP_SECONDS
    try:
        answer = await resolver.resolve(name, "TXT", search=False)
    except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
        return []
    except dns.exception.Timeout:
        raise LookupFailed("the DNS lookup timed out") from None
    except dns.exception.DNSException as exc:
        raise LookupFailed(f"the DNS lookup failed: {exc}") from None
    return [b"".join(record.strings).decode("utf-8", "replace") for record in answer]
