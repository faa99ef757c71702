import threading
import time

from shortlink.web.health import CLICK_WRITER_STUCK_SECONDS, click_writer_problem


def test_healthz_reports_ok_with_the_click_queue(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "clicksPending": 0, "clicksDropped": 0}


def test_healthz_fails_when_the_database_thread_is_stuck(client):
    services = client.app.state.services
    release = threading.Event()
    client.blocking_portal.start_task_soon(services.db.run, lambda conn: release.wait(10))
    try:
        started = time.monotonic()
        response = client.get("/healthz")
        assert response.status_code == 503 and response.json()["reason"].startswith("database")
        assert time.monotonic() - started < 5
    finally:
        release.set()
    assert client.get("/healthz").status_code == 200


def test_click_writer_is_stuck_only_with_old_pending_clicks():
    now = 1000.0
    assert click_writer_problem(0, now - 10 * CLICK_WRITER_STUCK_SECONDS, now) is None
    assert click_writer_problem(5, now - 1, now) is None
    assert "5 clicks waiting" in click_writer_problem(5, now - CLICK_WRITER_STUCK_SECONDS - 1, now)
