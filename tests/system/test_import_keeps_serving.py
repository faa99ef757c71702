"""A real server keeps answering while a hostile file is imported through its dashboard: the
parse runs in a process of its own, in time proportional to the file (8,000 repetitions of
`INSERT INTO yourls_url (` once held every request of the server for 29 s)."""

from __future__ import annotations

import http.client
import threading
import time

import httpx
import pytest

from shortlink.storage import connect
from tests.cli.test_import_hostile import VALID_INSERT
from tests.support.dashboard import csrf_of, make_account, sign_in
from tests.support.helpers import assert_answered_promptly
from throwaway.live_server import LiveServer

pytestmark = pytest.mark.slow
EMAIL = "importer@example.com"
HOSTILE = [b"INSERT INTO yourls_url (" * 8000, VALID_INSERT + b"CREATE TABLE a (" * 8000]


def test_healthz_answers_within_100_ms_while_a_hostile_dump_is_imported(tmp_path):
    server = LiveServer(tmp_path, dashboard_imports_per_minute_per_account="1000").start()
    try:
        conn = connect(server.db)
        try:
            make_account(conn, EMAIL)
        finally:
            conn.close()
        with httpx.Client(base_url=server.base_url, timeout=120) as client:
            assert sign_in(client, EMAIL).status_code == 303
            token = csrf_of(client.get("/import").text)
            answers: list[int] = []

            def import_hostile_files() -> None:
                for _round in range(3):
                    for hostile in HOSTILE:
                        answer = client.post(
                            "/import",
                            data={"csrf": token, "source": "yourls", "on_conflict": "skip"},
                            files={"file": ("hostile.sql", hostile, "application/sql")},
                        )
                        answers.append(answer.status_code)

            importing = threading.Thread(target=import_hostile_files)
            probe = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            probe.request("GET", "/healthz")
            probe.getresponse().read()  # connected: each probe below is one request's time
            importing.start()
            timings = []
            while importing.is_alive() or len(timings) < 20:
                started = time.perf_counter()
                probe.request("GET", "/healthz")
                response = probe.getresponse()
                response.read()
                timings.append(time.perf_counter() - started)
                assert response.status == 200
            importing.join()
            probe.close()
    finally:
        server.stop()
    # The first refused with one clear error, the second's one good statement planned: never a 500.
    assert answers == [400, 200] * 3, answers
    assert len(timings) >= 20
    assert_answered_promptly(timings)
