"""The access log of a real server: every line one JSON object, without personal data."""

from __future__ import annotations

import json
import re

import pytest

from throwaway.live_server import LiveServer

pytestmark = pytest.mark.slow

VISITOR_IP = "198.51.100.23"
FIELDS = {"time", "method", "path", "status", "ms"}


def test_every_access_line_is_a_json_object_without_ip_or_query(tmp_path):
    server = LiveServer(tmp_path, server_access_log="true", network_trusted_proxies="127.0.0.0/8")
    key = server.create_key("log@example.com")
    server.start()
    try:
        sent = [
            ("GET", "/api/v1/me?email=someone%40example.com", 200),
            ("GET", "/l/nosuchcode?utm_source=newsletter&token=abc123", 404),
            ("HEAD", "/l/nosuchcode", 404),
            ("DELETE", "/api/v1/links/lnk_unknown", 404),
        ]
        for method, path, status in sent:
            headers = {
                "Authorization": f"Bearer {key}",
                "X-Forwarded-For": VISITOR_IP,
                "User-Agent": "Mozilla/5.0 (secret agent)",
            }
            assert server.request(method, path, headers=headers)[0] == status, path
    finally:
        server.stop()
    lines = server.log.read_text().splitlines()
    access = [json.loads(line) for line in lines if line.startswith("{")]
    # Nothing else in the log carries an access record (no prefixed copies of the lines).
    assert not [line for line in lines if not line.startswith("{") and '"method"' in line]
    assert all(set(record) == FIELDS for record in access)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", record["time"]) for record in access)
    ours = [(r["method"], r["path"], r["status"]) for r in access if (r["method"], r["path"]) != ("GET", "/healthz")]
    assert ours == [(method, path.split("?")[0], status) for method, path, status in sent]
    # The peer address is only in uvicorn's "running on" line; the visitor's nowhere.
    access_text = "\n".join(line for line in lines if line.startswith("{"))
    for private in ("127.0.0.1", "someone", "abc123", "newsletter", "secret agent", key):
        assert private not in access_text, private
    assert VISITOR_IP not in "\n".join(lines)
