"""The domain tools: list the account's domains, connect one (answering the DNS record to
create) and check its record now, as the API's /domains does. Registered with the other tools
when a transport imports this module."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from shortlink.accounts.schema import Principal
from shortlink.domains.schema import CreateDomain, Domain, DomainListResponse
from shortlink.mcp.tools import NoArguments, ToolResult, tool
from shortlink.wiring import Services

DomainId = Annotated[str, Meta(description="The domain's id, dom_…, as add_domain and list_domains return it")]


class DomainArguments(msgspec.Struct, forbid_unknown_fields=True):
    id: DomainId


def _domain_line(domain: Domain) -> str:
    if domain.verified:
        state = "verified, serving the account's links"
    elif domain.verification is None:
        state = "not verified"
    else:
        record = domain.verification
        state = f"not verified: needs a {record.type} record {record.name} holding {record.value}"
    if domain.check_error:
        state += f" (last check: {domain.check_error})"
    return f"{domain.name} ({domain.id}): {state}"


@tool(
    "list_domains",
    "The domains the account has connected to serve its short links, each verified or waiting for its DNS TXT "
    "record (with the record to create and what the last check found).",
    NoArguments,
    DomainListResponse,
    read_only=True,
)
async def list_domains(services: Services, principal: Principal, _: NoArguments) -> ToolResult:
    domains = await services.domains.all(principal.account_id)
    return ToolResult(
        DomainListResponse(domains),
        "\n- ".join([f"{len(domains)} domains" + (":" if domains else ""), *map(_domain_line, domains)]),
    )


@tool(
    "add_domain",
    "Connect a domain (e.g. go.brand.example) to serve the account's short links. The answer's `verification` is "
    "the DNS TXT record its owner must create; once it exists, verify_domain (or the hourly check) verifies the "
    "domain and it is served. Optional rootRedirect and notFoundRedirect: where / and an unknown code lead on it. "
    "Adding a name the account already has answers that domain again.",
    CreateDomain,
    Domain,
    idempotent=True,
)
async def add_domain(services: Services, principal: Principal, arguments: CreateDomain) -> ToolResult:
    domain = await services.domains.create(principal.account_id, arguments)
    return ToolResult(domain, f"Added {_domain_line(domain)}. Then call verify_domain with id {domain.id}.")


@tool(
    "verify_domain",
    "Look for a domain's DNS TXT record now (it is also looked for hourly for a week): answers the domain as it "
    "then is, verified or with what the check found.",
    DomainArguments,
    Domain,
    idempotent=True,
)
async def verify_domain(services: Services, principal: Principal, arguments: DomainArguments) -> ToolResult:
    domain = await services.domains.verify(principal.account_id, arguments.id)
    return ToolResult(domain, f"Checked {_domain_line(domain)}.")
