"""Keys, passwords and visitor IPs never reach the logs or the database file."""

from __future__ import annotations

import json

import pytest

from shortlink.storage import connect
from tests.support.visitors import DESKTOP
from throwaway.live_server import LiveServer

pytestmark = pytest.mark.slow

VISITOR_IP = "203.0.113.77"
PASSWORD = "correct horse battery"


def test_keys_passwords_and_ips_are_never_written_anywhere(tmp_path):
    server = LiveServer(tmp_path, network_trusted_proxies="127.0.0.0/8", server_access_log="true")
    key = server.create_key("secret@example.com")
    server.start()
    try:
        auth = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        status, data = server.request(
            "POST",
            "/api/v1/links",
            json.dumps({"originalUrl": "https://example.com/s", "title": "s", "password": PASSWORD}),
            auth,
        )
        assert status == 201
        code = json.loads(data)["data"]["shortCode"]
        visitor = {
            "X-Forwarded-For": VISITOR_IP,
            "User-Agent": DESKTOP,  # a person: bots never get past the password form
            "Content-Type": "application/x-www-form-urlencoded",
        }
        assert server.request("POST", f"/l/{code}", f"password={PASSWORD.replace(' ', '+')}", visitor)[0] == 303
        assert server.request("POST", f"/l/{code}", "password=wrong-guess", visitor)[0] == 403
        assert server.request("GET", f"/api/v1/me?k={key}", headers=auth)[0] == 200
    finally:
        server.stop()
    conn = connect(server.db)
    assert conn.execute("SELECT count(*) FROM clicks").fetchone()[0] == 1  # the click was stored
    conn.close()
    stored = b"".join(path.read_bytes() for path in tmp_path.iterdir() if path.name.startswith("live.db"))
    log = server.log.read_bytes()
    assert b"/l/" in log  # the access log is on
    for secret in (key, key[len("sl_live_") :], PASSWORD, "wrong-guess", VISITOR_IP):
        assert secret.encode() not in stored, secret
        assert secret.encode() not in log, secret
