"""Short codes with path tricks, encodings and look-alikes never reach another link;
nothing from the request is reflected into pages or redirects."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.support.visitors import DESKTOP, flush, make_link, visit


@pytest.fixture
def abc(client, auth):
    return make_link(client, auth, customCode="abc", originalUrl="https://example.com/abc")


@pytest.mark.parametrize(
    "path",
    [
        "/l/ABC",
        "/l/Abc",
        "/l/abc%20",
        "/l/%20abc",
        "/l/abc%00",
        "/l/abc.",
        "/l/ａｂｃ",  # fullwidth
        "/l/аbс",  # Cyrillic а and с
        "/l/abc%2F..",
        "/l/..%2Fabc",
        "/l/abc/x",
        "/l/ab%63%00",
        "/l/abc/..",
    ],
)
def test_tricks_never_resolve_to_the_link(client, abc, path):
    response = client.get(path, headers={"User-Agent": DESKTOP}, follow_redirects=False)
    assert response.status_code == 404, path
    assert "example.com/abc" not in response.text and "location" not in response.headers


@pytest.mark.parametrize("path", ["/l/%61bc", "/l/abc/", "/l//abc"])
def test_equivalent_spellings_are_the_same_link(client, abc, path):
    # %61 is "a"; a trailing or doubled slash is normalised by the router: the same link, never another.
    response = client.get(path, headers={"User-Agent": DESKTOP}, follow_redirects=False)
    assert response.status_code == 302 and response.headers["location"] == "https://example.com/abc"


def test_the_only_redirect_target_is_the_links_own_destination(client, abc):
    for query in ("next=https://evil.example", "url=//evil.example", "redirect=https:%2F%2Fevil.example"):
        response = visit(client, "abc", query=query)
        assert urlsplit(response.headers["location"]).hostname == "example.com"


def test_hostile_request_data_is_never_reflected(client, abc):
    hostile = '"><script>alert(1)</script>'
    response = client.get("/l/" + "%22%3E%3Cscript%3E", headers={"User-Agent": hostile, "Referer": hostile})
    assert response.status_code == 404 and "<script>alert" not in response.text
    response = visit(client, "abc", ua=hostile, query="utm_source=" + "%22%3E%3Cscript%3E")
    assert "<script>alert" not in response.text


def test_an_oversized_user_agent_is_cropped_not_refused(client, abc, conn):
    agent = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) " + "x" * 20_000
    response = visit(client, "abc", ua=agent)
    assert response.status_code == 302
    flush(client)
    stored = conn.execute("SELECT user_agent, os FROM clicks").fetchone()
    assert stored["user_agent"] == agent[:512] and stored["os"] == "iOS"
