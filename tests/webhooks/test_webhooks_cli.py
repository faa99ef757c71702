"""`shortlink webhooks …`: the operator's door onto the same endpoints, secrets and log."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tests.support.helpers import wait_for
from tests.support.receiver import running_receiver


def cli_json(*args: str) -> dict:
    return json.loads(run_cli("webhooks", *args, "--json").stdout)


@pytest.mark.slow
def test_the_cli_adds_lists_tests_rotates_replays_and_removes_endpoints(make_client, auth, storage, monkeypatch):
    monkeypatch.setenv("SHORTLINK_FETCHER_ALLOW_PRIVATE_ADDRESSES", "true")
    client = make_client(fetcher_allow_private_addresses=True)
    db = ("--db", storage)
    with running_receiver() as receiver:
        added = cli_json("add", receiver.url, "--email", "owner@example.com", "--event", "link.created", *db)
        assert added["id"].startswith("whk_") and added["events"] == ["link.created"]
        # The secret the CLI shows is the one the server signs with (same key file and database).
        receiver.secrets = [added["secret"]]
        client.post("/api/v1/links", json={"originalUrl": "https://example.com/cli"}, headers=auth)
        wait_for(lambda: receiver.count() >= 1, what="link.created")
        assert receiver.received[0].verified_by == [added["secret"]]

        listed = cli_json("list", "--email", "owner@example.com", *db)["data"]
        assert [hook["id"] for hook in listed] == [added["id"]] and "secret" not in listed[0]
        text = run_cli("webhooks", "list", "--email", "owner@example.com", *db).stdout
        assert added["id"] in text and "enabled" in text

        # A test event queued by the CLI is sent by the running server.
        event_id = cli_json("test", added["id"], *db)["eventId"]
        wait_for(lambda: receiver.count() >= 2, what="the test event")
        assert receiver.received[-1].headers["webhook-id"] == event_id
        log = cli_json("deliveries", added["id"], *db)["data"]
        assert [entry["eventType"] for entry in log] == ["webhook.test", "link.created"]
        assert all(entry["status"] == 200 for entry in log)

        rotated = cli_json("rotate", added["id"], "--overlap-seconds", "0", *db)
        assert rotated["previousSecretValidUntil"] is None
        receiver.secrets = [added["secret"], rotated["secret"]]
        assert cli_json("replay", added["id"], "--event", event_id, *db) == {"replayed": 1}
        wait_for(lambda: receiver.count() >= 3, what="the replay")
        assert receiver.received[-1].verified_by == [rotated["secret"]]

    # Bad input: one line, no traceback; unknown ids are "not found" (exit 2).
    bad = run_cli(
        "webhooks",
        "add",
        "https://example.com/",
        "--email",
        "owner@example.com",
        "--event",
        "link.nope",
        *db,
        check=False,
    )
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "events" in bad.stderr
    missing = run_cli("webhooks", "remove", "whk_nope", *db, check=False)
    assert missing.returncode == 2 and "whk_nope" in missing.stderr
    assert cli_json("remove", added["id"], *db) == {"deleted": added["id"]}
    assert cli_json("list", "--email", "owner@example.com", *db) == {"data": []}
