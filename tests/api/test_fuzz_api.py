"""Schema-driven fuzzing of the whole API against a real server process.

Every operation of the served OpenAPI document is fuzzed with schemathesis's
Hypothesis strategies, with valid (positive) and invalid (negative) data, and
every response is validated against the document: no 500, documented status
codes, content types, headers and bodies, errors in the envelope.

Bounded and seeded: a fixed number of examples per operation and mode,
derandomized, so the run is repeatable and fits in the suite's time budget.
The strategies are driven by a plain Hypothesis test rather than schemathesis's
pytest plugin (`schemathesis.pytest.from_fixture`), which reaches into pytest
internals that pytest 9.2 removed.
"""

from __future__ import annotations

import itertools

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import positive_data_acceptance

from throwaway.dns_server import DnsServer
from throwaway.live_server import LiveServer

# Fuzzing every operation is the suite's longest test: scheduled first.
pytestmark = pytest.mark.slow(seconds=120)

# Per operation and mode. A link's (or webhook's) operations run with a real one of the
# account, which reaches every rule, and with random ids, which only reach the 404: fewer of those.
EXAMPLES = 25
EXAMPLES_WITH_A_RANDOM_ID = 8
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    # A domain's verification asks a DNS server: this local one, never the machine's.
    with DnsServer() as dns:
        server = LiveServer(
            tmp_path_factory.mktemp("fuzz"),
            limits_requests_per_minute="1000000",
            limits_links_per_day="1000000",
            domains_nameservers=dns.address,
        )
        server.key = server.create_key("fuzz@example.com")
        server.start()
        yield server
        server.stop()


def assert_error_envelope(response: requests.Response) -> None:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body


def new_link_id(live, session: requests.Session) -> str:
    response = session.post(
        f"{live.base_url}/api/v1/links",
        json={"originalUrl": "https://example.com/fuzz"},
        headers={"Authorization": f"Bearer {live.key}"},
    )
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def new_webhook_id(live, session: requests.Session) -> str:
    response = session.post(
        f"{live.base_url}/api/v1/webhooks",
        json={"url": "https://example.com/fuzz-hook", "events": ["link.created"]},
        headers={"Authorization": f"Bearer {live.key}"},
    )
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def new_domain_id(live, session: requests.Session) -> str:
    response = session.post(
        f"{live.base_url}/api/v1/domains",
        json={"name": f"fuzz-{next(DOMAIN_NUMBERS)}.example.com"},
        headers={"Authorization": f"Bearer {live.key}"},
    )
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


DOMAIN_NUMBERS = itertools.count()
NEW_ID = {"/api/v1/webhooks/": new_webhook_id, "/api/v1/domains/": new_domain_id}


def test_every_operation_conforms_and_never_fails(live):
    """Checks: every schemathesis check except `positive_data_acceptance`, which
    expects every schema-valid request to succeed; the API has documented 400s
    for rules a schema cannot state (expiresAt in the future, a real host name,
    PATCH with at least one field)."""
    # Auth through the document's own security scheme, so negative cases never "remove" the
    # Authorization header only for it to be sent anyway.
    config = SchemathesisConfig.from_dict({"auth": {"openapi": {"bearerAuth": {"bearer": live.key}}}})
    schema = schemathesis.openapi.from_url(f"{live.base_url}/api/v1/schema/openapi.json", config=config)
    session = requests.Session()
    failures: list[str] = []
    cases_run: dict[str, int] = {}
    budget: dict[str, int] = {}
    calls: list[None] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    # The spec's nine (/me, the five of /links, the link's QR and analytics, the account's
    # analytics) and the extensions beside them (tags, bulk create and actions, CSV analytics, raw
    # clicks, link rules, a link's destination, apps, webhooks, domains).
    assert sorted(f"{op.method.upper()} {op.path}" for op in operations) == [
        "DELETE /api/v1/apps/{id}",
        "DELETE /api/v1/domains/{id}",
        "DELETE /api/v1/links/{id}",
        "DELETE /api/v1/links/{id}/destination",
        "DELETE /api/v1/webhooks/{id}",
        "GET /api/v1/analytics",
        "GET /api/v1/analytics/clicks",
        "GET /api/v1/analytics/csv",
        "GET /api/v1/apps",
        "GET /api/v1/apps/{id}",
        "GET /api/v1/domains",
        "GET /api/v1/domains/{id}",
        "GET /api/v1/links",
        "GET /api/v1/links/{id}",
        "GET /api/v1/links/{id}/analytics",
        "GET /api/v1/links/{id}/analytics/csv",
        "GET /api/v1/links/{id}/app",
        "GET /api/v1/links/{id}/app/analytics",
        "GET /api/v1/links/{id}/destination",
        "GET /api/v1/links/{id}/qr",
        "GET /api/v1/links/{id}/rules",
        "GET /api/v1/links/{id}/rules/analytics",
        "GET /api/v1/links/{id}/tags",
        "GET /api/v1/me",
        "GET /api/v1/webhooks",
        "GET /api/v1/webhooks/{id}",
        "GET /api/v1/webhooks/{id}/deliveries",
        "PATCH /api/v1/domains/{id}",
        "PATCH /api/v1/links/{id}",
        "PATCH /api/v1/webhooks/{id}",
        "POST /api/v1/apps",
        "POST /api/v1/domains",
        "POST /api/v1/domains/{id}/verify",
        "POST /api/v1/links",
        "POST /api/v1/links/bulk",
        "POST /api/v1/links/bulk/actions",
        "POST /api/v1/links/{id}/rules/test",
        "POST /api/v1/webhooks",
        "POST /api/v1/webhooks/{id}/replay",
        "POST /api/v1/webhooks/{id}/rotate",
        "POST /api/v1/webhooks/{id}/test",
        "PUT /api/v1/links/{id}/app",
        "PUT /api/v1/links/{id}/destination",
        "PUT /api/v1/links/{id}/rules",
        "PUT /api/v1/links/{id}/tags",
    ]

    for operation in operations:
        # A real link (or webhook) of the account reaches every rule; random ids only the 404.
        id_choices = [None, "existing"] if "{id}" in operation.path else ["none in the path"]
        for mode in MODES:
            for id_choice in id_choices:
                make_id = next((new for at, new in NEW_ID.items() if operation.path.startswith(at)), new_link_id)
                path_parameters = {"id": make_id(live, session)} if id_choice == "existing" else None
                label = f"{operation.label} ({mode.value}, id: {id_choice or 'generated'})"
                budget[label] = EXAMPLES if id_choice else EXAMPLES_WITH_A_RANDOM_ID

                @given(case=operation.as_strategy(mode, path_parameters=path_parameters))
                @settings(
                    max_examples=budget[label],
                    derandomize=True,
                    deadline=None,
                    database=None,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=list(HealthCheck),
                )
                def fuzz(case):
                    calls.append(None)
                    response = case.call_and_validate(
                        base_url=live.base_url, session=session, excluded_checks=[positive_data_acceptance]
                    )
                    assert response.status_code < 500
                    if response.status_code >= 400:
                        assert_error_envelope(response)

                before = len(calls)
                try:
                    fuzz()
                # Schemathesis raises a FailureGroup (a BaseExceptionGroup) of every distinct failure.
                except (Exception, BaseExceptionGroup) as failure:  # every operation's, not just the first
                    failures.append(f"{label}: {failure}")
                cases_run[label] = len(calls) - before

    print(f"\nfuzzed {len(operations)} operations with {sum(cases_run.values())} cases")
    assert not failures, "\n\n".join(failures)
    # Every operation, mode and kind of id ran: at least half its budget (Hypothesis ends
    # early where a strategy has fewer distinct cases to give).
    short = {label: n for label, n in cases_run.items() if n < budget[label] / 2}
    assert budget.keys() == cases_run.keys() and not short, short


def test_what_the_fuzzer_found_stays_fixed(live):
    headers = {"Authorization": f"Bearer {live.key}"}
    # A page number whose row offset overflowed SQLite's integers was a 500; any page
    # past the end is now an empty page that still counts the account's links.
    huge_page = requests.get(f"{live.base_url}/api/v1/links", params={"page": 10**27}, headers=headers)
    assert huge_page.status_code == 200
    assert huge_page.json()["data"] == []
    assert huge_page.json()["pagination"]["page"] == 10**27
    # The document promised extra body fields and any string as a URL were accepted.
    document = requests.get(f"{live.base_url}/api/v1/schema/openapi.json").json()
    schemas = document["components"]["schemas"]
    assert schemas["CreateLink"]["additionalProperties"] is False
    assert schemas["UpdateLink"]["additionalProperties"] is False
    assert schemas["CreateLink"]["properties"]["originalUrl"]["pattern"].startswith("^[Hh][Tt][Tt][Pp]")
    extra_field = requests.post(
        f"{live.base_url}/api/v1/links", headers=headers, json={"originalUrl": "https://example.com/", "colour": "red"}
    )
    assert extra_field.status_code == 400
    assert extra_field.json()["error"]["message"].startswith("colour:")
