"""The link-rules editor on a real server process: a form that states an absurd number of rule
cards is read by the cards it sends, so the process keeps answering everyone else meanwhile."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from tests.support.browser import api, dashboard_server
from tests.support.dashboard import csrf_of
from tests.support.helpers import assert_answered_promptly

pytestmark = pytest.mark.slow

EMAIL, PASSWORD = "hostile@example.com", "a long enough password"
PROBES = 40


def test_healthz_keeps_answering_while_a_rules_form_states_a_huge_count(tmp_path):
    with dashboard_server(tmp_path, EMAIL, PASSWORD) as server:
        link = api(server, "POST", "/api/v1/links", server.create_key(EMAIL), {"originalUrl": "https://example.com/"})
        editor = f"/links/{link['id']}/rules"
        with httpx.Client(base_url=server.base_url, timeout=5) as owner:
            login = owner.get("/login")
            signed = owner.post("/login", data={"email": EMAIL, "password": PASSWORD, "csrf": csrf_of(login.text)})
            assert signed.status_code == 303, signed.text
            token = csrf_of(owner.get(editor).text)
            statuses: list[int | str] = []
            started = threading.Event()

            def attack() -> None:
                started.set()
                for count in ("10000000", "9" * 100) * 3:
                    form = {"csrf": token, "count": count, "op": "save", "r0-url": "https://example.com/a"}
                    try:
                        statuses.append(owner.post(editor, data=form).status_code)
                    except httpx.HTTPError as exc:
                        statuses.append(type(exc).__name__)

            attacker = threading.Thread(target=attack, daemon=True)
            attacker.start()
            started.wait(timeout=10)
            took: list[float] = []
            with httpx.Client(base_url=server.base_url, timeout=2) as prober:
                while len(took) < PROBES or attacker.is_alive():
                    begun = time.perf_counter()
                    try:
                        answered = prober.get("/healthz").status_code == 200
                    except httpx.TimeoutException:
                        answered = False
                    took.append(time.perf_counter() - begun if answered else float("inf"))
                    if not answered:
                        break
            attacker.join(timeout=10)
        assert_answered_promptly(took)
        assert statuses == [303] * 6
        rules = api(server, "GET", f"/api/v1/links/{link['id']}/rules", server.create_key(EMAIL))["rules"]
        assert [rule["url"] for rule in rules] == ["https://example.com/a"]
