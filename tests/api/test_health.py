import os
import threading
import time

from shortlink.application.health import click_writer_problem
from tests.support.helpers import wait_for

STUCK_AFTER = 10.0


def test_healthz_reports_ok_with_the_click_queue(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "process": os.getpid(),  # the app runs in this process here
        "clicksPending": 0,
        "clicksWritten": 0,
        "clicksDropped": 0,
    }


def test_healthz_fails_when_the_database_thread_is_stuck(client):
    services = client.app.state.services
    release = threading.Event()
    client.blocking_portal.start_task_soon(services.db.write, lambda conn: release.wait(10))
    try:
        started = time.monotonic()
        response = client.get("/healthz")
        assert response.status_code == 503 and response.json()["reason"].startswith("database")
        assert time.monotonic() - started < 5
    finally:
        release.set()
    assert client.get("/healthz").status_code == 200


def test_healthz_fails_while_the_click_writer_cannot_commit_and_recovers_after(make_client, auth, conn):
    # 10 ms flushes: the writer counts as stuck after 100 of them, 1 s without a write.
    client = make_client(clicks_flush_interval_ms=10)
    code = client.post("/api/v1/links", json={"originalUrl": "https://example.com/a"}, headers=auth).json()["data"][
        "shortCode"
    ]
    assert client.get(f"/l/{code}", follow_redirects=False).status_code == 302  # the link is cached now
    wait_for(lambda: conn.execute("SELECT count(*) FROM clicks").fetchone()[0] >= 1, 5, "the first click to be written")
    conn.execute("BEGIN IMMEDIATE")  # another process holds the write lock: no batch can commit
    try:
        assert client.get(f"/l/{code}", follow_redirects=False).status_code == 302
        response = wait_for(
            lambda: "click writer" in (answer := client.get("/healthz")).text and answer, 10, "the writer to be stuck"
        )
        assert response.status_code == 503, response.text
        assert response.json()["reason"].startswith("click writer: 1 clicks waiting")
    finally:
        conn.execute("ROLLBACK")
    response = wait_for(lambda: (answer := client.get("/healthz")).status_code == 200 and answer, 5, "a 200")
    assert response.json()["clicksPending"] == 0
    assert conn.execute("SELECT count(*) FROM clicks").fetchone()[0] == 2


def test_click_writer_is_stuck_only_with_old_pending_clicks():
    now = 1000.0
    assert click_writer_problem(0, now - 10 * STUCK_AFTER, now, STUCK_AFTER) is None
    assert click_writer_problem(5, now - 1, now, STUCK_AFTER) is None
    assert "5 clicks waiting" in click_writer_problem(5, now - STUCK_AFTER - 1, now, STUCK_AFTER)
