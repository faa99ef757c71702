"""`shortlink domain list|verify|remove` over the domains accounts connect themselves, checked
against a real DNS server on 127.0.0.1 (throwaway.dns_server), and seen by the real app."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from shortlink.accounts import service as accounts
from shortlink.domains import service as domains
from shortlink.domains.schema import CreateDomain
from shortlink.times import utcnow
from tests.conftest import run_cli
from tests.support.helpers import cli_here, wait_for, wait_for_domain
from tests.support.terminal import on_terminal
from throwaway.dns_server import DnsServer

EMAIL = "owner@example.com"
NAME = "go.brand.example"


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    with DnsServer() as server:
        yield server


@pytest.fixture
def args(storage: str, tmp_path: Path, dns: DnsServer) -> list[str]:
    """--db and a --config naming the test's DNS server as `[domains] nameservers`."""
    config = tmp_path / "domains.toml"
    config.write_text(f'[domains]\nnameservers = ["{dns.address}"]\n', encoding="utf-8")
    return ["--db", storage, "--config", str(config)]


def connected(conn, name: str = NAME, email: str = EMAIL) -> dict:
    """A domain connected as an account connects one (POST /api/v1/domains), as JSON."""
    account_id = accounts.ensure_account(conn, email)["id"]
    domain = domains.connect(conn, account_id, name, CreateDomain(name=name), utcnow())
    return {"id": domain.id, "record": domain.verification.name, "value": domain.verification.value}


def cli_json(*args: str, code: int = 0) -> dict:
    exit_code, output = cli_here(*args, "--json")
    assert exit_code == code, output
    return json.loads(output)


def one_line(text: str) -> str:
    assert "Traceback" not in text and text.count("\n") == 1, text
    return text


def test_list_prints_each_domain_and_json_carries_the_apis_objects(make_client, conn, args, auth):
    client = make_client()
    mine = connected(conn)
    run_cli("domain", "add", "--email", EMAIL, "links.brand.example", *args)
    text = run_cli("domain", "list", "--email", EMAIL, *args).stdout
    waiting, operators = text.splitlines()
    assert waiting.startswith(f"{mine['id']}  {NAME}  not verified: needs TXT {mine['record']}")
    assert mine["value"] in waiting
    assert operators.endswith("links.brand.example  verified (added by the operator)")
    listed = cli_json("domain", "list", "--email", EMAIL, *args)
    assert listed == client.get("/api/v1/domains", headers=auth).json()
    assert [domain["name"] for domain in listed["data"]] == [NAME, "links.brand.example"]
    assert run_cli("domain", "list", "--email", "new@example.com", *args, check=False).returncode == 2
    accounts.ensure_account(conn, "new@example.com")
    assert run_cli("domain", "list", "--email", "new@example.com", *args).stdout == "no domains\n"
    assert cli_json("domain", "list", "--email", "new@example.com", *args) == {"data": []}


@pytest.mark.both_backends
def test_verify_looks_for_the_record_now_and_the_server_serves_the_domain_once_found(make_client, conn, args, dns):
    client = make_client()
    mine = connected(conn)
    before = run_cli("domain", "verify", NAME, *args, check=False)
    assert before.returncode == 1
    assert one_line(before.stdout).startswith(f"{NAME} ({mine['id']}): not verified: needs TXT {mine['record']}")
    assert f"last check: no TXT record shortlink-verify=... at {mine['record']}" in before.stdout
    shown = cli_json("domain", "verify", mine["id"], *args, code=1)
    assert shown["verified"] is False and shown["checkedAt"] and mine["record"] in shown["checkError"]

    dns.set_txt(mine["record"], "another=record", mine["value"])
    after = run_cli("domain", "verify", NAME.upper() + ".", "--email", EMAIL, *args)
    assert one_line(after.stdout) == f"{NAME} ({mine['id']}): verified\n"
    # The running server hears of it through the database.
    wait_for_domain(client, NAME)
    assert client.get("/tls/allowed", params={"domain": NAME}).status_code == 200
    shown = cli_json("domain", "verify", mine["id"], *args)
    assert shown["verified"] is True and shown["verifiedAt"] and shown["checkError"] is None

    # The operator's domains have no record: nothing to look for, verified.
    run_cli("domain", "add", "--email", EMAIL, "links.brand.example", *args)
    operators = run_cli("domain", "verify", "links.brand.example", *args).stdout
    assert operators.startswith("links.brand.example (dom_") and operators.endswith(
        "): verified (added by the operator)\n"
    )


def test_remove_asks_first_and_yes_removes_for_scripts(make_client, conn, args, dns):
    client = make_client()
    mine = connected(conn)
    dns.set_txt(mine["record"], mine["value"])
    run_cli("domain", "verify", mine["id"], *args)
    wait_for_domain(client, NAME)
    # Not on a terminal (run_cli's standard input is /dev/null) and at the end of input on one:
    # one line naming --yes, and the domain is kept.
    refused = run_cli("domain", "remove", NAME, *args, check=False)
    assert refused.returncode == 1 and "--yes" in one_line(refused.stderr) and "not on a terminal" in refused.stderr
    code, output = on_terminal("domain", "remove", NAME, *args, answer=b"\x04")
    assert code == 1 and "Traceback" not in output and "end of input" in output and "--yes" in output
    assert f"Remove {NAME} from {EMAIL}?" in output
    assert [domain["id"] for domain in cli_json("domain", "list", "--email", EMAIL, *args)["data"]] == [mine["id"]]

    assert cli_json("domain", "remove", mine["id"], "--yes", *args) == {"id": mine["id"], "deleted": True}
    assert cli_json("domain", "list", "--email", EMAIL, *args) == {"data": []}
    hosts = client.app.state.services.hosts
    wait_for(lambda: not hosts.is_ours(NAME), 5, f"the server to forget {NAME}")
    assert client.get("/tls/allowed", params={"domain": NAME}).status_code == 404


def test_an_unknown_host_or_id_is_one_line(conn, args):
    mine = connected(conn)
    accounts.ensure_account(conn, "other@example.com")
    for command in (
        ("verify", "nosuch.example"),
        ("verify", "dom_nosuchdomain0000000"),
        ("verify", NAME, "--email", "other@example.com"),
        ("remove", "nosuch.example", "--yes"),
        ("remove", "dom_nosuchdomain0000000", "--yes"),
    ):
        missing = run_cli("domain", *command, *args, check=False)
        assert missing.returncode == 2 and missing.stdout == "", command
        assert one_line(missing.stderr).startswith("shortlink: ") and command[1] in missing.stderr, command
        assert cli_json("domain", *command, *args, code=2)["error"]["code"] == "NOT_FOUND"
    # Nothing was checked or removed on the way.
    (kept,) = cli_json("domain", "list", "--email", EMAIL, *args)["data"]
    assert kept["id"] == mine["id"] and kept["checkedAt"] is None
