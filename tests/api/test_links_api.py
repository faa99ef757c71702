"""The five /links endpoints through the real app, rule by rule."""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime, timedelta

import pytest
from litestar.testing import TestClient

from tests.conftest import SHORT_HOST, bearer
from tests.support.helpers import error_of

pytestmark = pytest.mark.both_backends

LINK_FIELDS = {
    "id",
    "shortCode",
    "shortUrl",
    "originalUrl",
    "platform",
    "title",
    "description",
    "ogImage",
    "iosUrl",
    "androidUrl",
    "isActive",
    "isPasswordProtected",
    "expiresAt",
    "clickCount",
    "source",
    "createdAt",
    "updatedAt",
}
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def future(days: int = 1) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).isoformat().replace("+00:00", "Z")


def create(client, auth, **body):
    return client.post("/api/v1/links", headers=auth, json={"originalUrl": "https://example.com/page", **body})


def test_create_returns_201_with_every_field(client, auth):
    response = create(
        client,
        auth,
        title="Example",
        description="An example page",
        iosUrl="https://apps.apple.com/app/id1",
        androidUrl="https://play.google.com/store/apps/details?id=x.y",
    )
    assert response.status_code == 201
    link = response.json()["data"]
    assert set(link) == LINK_FIELDS
    assert re.fullmatch(r"[A-Za-z0-9]{6}", link["shortCode"])
    assert link["shortUrl"] == f"{SHORT_HOST}/l/{link['shortCode']}"
    assert link["originalUrl"] == "https://example.com/page" and link["platform"] == "OTHER"
    assert link["title"] == "Example" and link["description"] == "An example page" and link["isActive"] is True
    assert link["isPasswordProtected"] is False and link["expiresAt"] is None
    assert link["clickCount"] == 0 and link["source"] == "API"
    assert ISO_Z.match(link["createdAt"]) and link["createdAt"] == link["updatedAt"]
    assert link["id"].startswith("lnk_") and not link["id"][4:].isdigit()


def test_platform_is_detected_and_cannot_be_set(client, auth):
    link = create(client, auth, originalUrl="https://www.youtube.com/watch?v=dQw4w9WgXcQ").json()["data"]
    assert link["platform"] == "YOUTUBE"
    response = create(client, auth, platform="OTHER")
    assert response.status_code == 400 and "platform" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"originalUrl": "ftp://example.com/file"}, "originalUrl"),
        ({"originalUrl": "javascript:alert(1)"}, "originalUrl"),
        ({"originalUrl": "example.com"}, "originalUrl"),
        ({"originalUrl": "https://"}, "originalUrl"),
        ({"originalUrl": "https://exa mple.com/"}, "originalUrl"),
        ({"originalUrl": "https://example.com/" + "a" * 2030}, "originalUrl"),
        ({"originalUrl": ""}, "originalUrl"),
        ({"originalUrl": 42}, "originalUrl"),
        ({}, "originalUrl"),
        ({"customCode": "ab"}, "customCode"),
        ({"customCode": "a" * 33}, "customCode"),
        ({"customCode": "has space"}, "customCode"),
        ({"customCode": "ünï"}, "customCode"),
        ({"customCode": "a/b"}, "customCode"),
        ({"title": ""}, "title"),
        ({"title": "t" * 201}, "title"),
        ({"title": "   "}, "title"),
        ({"description": ""}, "description"),
        ({"description": "d" * 501}, "description"),
        ({"description": " \n "}, "description"),
        ({"password": "abc"}, "password"),
        ({"password": "p" * 65}, "password"),
        ({"expiresAt": "2001-01-01T00:00:00Z"}, "expiresAt"),
        ({"expiresAt": "tomorrow"}, "expiresAt"),
        ({"expiresAt": "2099-01-01T00:00:00"}, "expiresAt"),
        ({"expiresAt": "9999-12-31T23:00:00-05:00"}, "expiresAt"),  # the year 10000 in UTC
        ({"iosUrl": "itms-apps://apps.apple.com/app/id1"}, "iosUrl"),
        ({"androidUrl": "market://details?id=x"}, "androidUrl"),
        ({"isActive": False}, "isActive"),
    ],
)
def test_each_invalid_field_is_a_400_naming_the_field(client, auth, body, field):
    payload = {"originalUrl": "https://example.com", **body}
    if body == {}:
        payload = {}
    response = client.post("/api/v1/links", headers=auth, json=payload)
    assert response.status_code == 400, response.text
    assert error_of(response) == "VALIDATION_ERROR"
    assert field in response.json()["error"]["message"]


@pytest.mark.parametrize("word", ["api", "API", "docs", "healthz", "static", "Admin", "login", "dashboard", "schema"])
def test_reserved_words_are_rejected(client, auth, word):
    response = create(client, auth, customCode=word)
    assert response.status_code == 400 and "reserved" in response.json()["error"]["message"]
    assert "customCode" in response.json()["error"]["message"]


def test_the_visitor_path_segment_can_never_be_a_code(client, auth):
    from shortlink.links.validation import RESERVED_CODES

    assert "l" in RESERVED_CODES
    response = create(client, auth, customCode="l")
    assert response.status_code == 400 and "customCode" in response.json()["error"]["message"]


def test_custom_code_taken_is_409_and_codes_are_case_sensitive(client, auth, new_key):
    assert create(client, auth, customCode="promo-2026").status_code == 201
    response = create(client, auth, customCode="promo-2026")
    assert response.status_code == 409 and error_of(response) == "CONFLICT"
    other = bearer(new_key("other@example.com"))
    assert create(client, other, customCode="promo-2026").status_code == 409
    assert create(client, auth, customCode="Promo-2026").status_code == 201


def test_concurrent_creates_of_one_code_one_wins(client, auth):
    results: list[int] = []

    def attempt():
        results.append(create(client, auth, customCode="race_code").status_code)

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [201] + [409] * 7


def test_password_is_write_only_and_stored_hashed(client, auth, conn):
    link = create(client, auth, password="s3cret-pass").json()["data"]
    assert link["isPasswordProtected"] is True
    assert "s3cret" not in str(link)
    stored = conn.execute("SELECT password_hash FROM links").fetchone()[0]
    assert stored.startswith("scrypt$") and "s3cret-pass" not in stored
    patched = client.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"password": None}).json()["data"]
    assert patched["isPasswordProtected"] is False
    patched = client.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"password": "again!"}).json()["data"]
    assert patched["isPasswordProtected"] is True
    assert "again" not in str(client.get(f"/api/v1/links/{link['id']}", headers=auth).json())


def test_get_patch_delete_are_scoped_to_the_account(client, auth, new_key):
    link = create(client, auth).json()["data"]
    other = bearer(new_key("intruder@example.com"))
    for method, body in [("GET", None), ("PATCH", {"title": "mine"}), ("DELETE", None)]:
        response = client.request(method, f"/api/v1/links/{link['id']}", headers=other, json=body)
        assert response.status_code == 404 and error_of(response) == "NOT_FOUND", method
    assert client.get("/api/v1/links", headers=other).json()["pagination"]["total"] == 0
    assert client.get(f"/api/v1/links/{link['id']}", headers=auth).status_code == 200
    assert client.get("/api/v1/links/lnk_doesnotexist", headers=auth).status_code == 404


def test_patch_transitions_of_the_state_table(client, auth):
    link = create(client, auth, title="Before").json()["data"]
    url = f"/api/v1/links/{link['id']}"

    paused = client.patch(url, headers=auth, json={"isActive": False}).json()["data"]
    assert paused["isActive"] is False and paused["updatedAt"] > link["updatedAt"]

    expiry = future(3)
    with_expiry = client.patch(url, headers=auth, json={"expiresAt": expiry}).json()["data"]
    assert with_expiry["expiresAt"] is not None and with_expiry["isActive"] is False
    assert datetime.fromisoformat(with_expiry["expiresAt"].replace("Z", "+00:00")) == datetime.fromisoformat(
        expiry.replace("Z", "+00:00")
    ).replace(microsecond=(datetime.fromisoformat(expiry.replace("Z", "+00:00")).microsecond // 1000) * 1000)

    no_expiry = client.patch(url, headers=auth, json={"expiresAt": None}).json()["data"]
    assert no_expiry["expiresAt"] is None

    active = client.patch(url, headers=auth, json={"isActive": True, "title": "After"}).json()["data"]
    assert active["isActive"] is True and active["title"] == "After"
    assert active["updatedAt"] > no_expiry["updatedAt"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "body"),
        ({"originalUrl": "https://other.example"}, "originalUrl"),
        ({"shortCode": "newcode"}, "shortCode"),
        ({"platform": "YOUTUBE"}, "platform"),
        ({"expiresAt": "2001-01-01T00:00:00Z"}, "expiresAt"),
        ({"title": ""}, "title"),
        ({"title": None}, "title"),
        ({"expiresAt": "9999-12-31T23:00:00-05:00"}, "expiresAt"),  # the year 10000 in UTC
        ({"isActive": "no"}, "isActive"),
        ({"isActive": "true"}, "isActive"),  # JSON booleans only, no coercion
        ({"isActive": "false"}, "isActive"),
        ({"isActive": 1}, "isActive"),
        ({"isActive": 0}, "isActive"),
        ({"isActive": None}, "isActive"),
        ({"title": 5}, "title"),
        ({"password": "abc"}, "password"),
    ],
)
def test_patch_validation(client, auth, body, field):
    link = create(client, auth).json()["data"]
    response = client.patch(f"/api/v1/links/{link['id']}", headers=auth, json=body)
    assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR"
    assert field in response.json()["error"]["message"]


def test_delete_removes_link_clicks_and_code(client, auth, conn):
    link = create(client, auth, customCode="gone-soon").json()["data"]
    link_row = conn.execute("SELECT id, account_id FROM links").fetchone()
    conn.execute("INSERT INTO user_agents (text, device, browser, os) VALUES ('ua', 'desktop', 'Chrome', 'Linux')")
    conn.execute(
        "INSERT INTO click_rows (link_id, account_id, ts, agent_id, country, referrer, campaign, visitor, is_bot)"
        " VALUES (?, ?, 0, 1, 'DE', 'direct', 'none', 7, 0)",
        (link_row[0], link_row[1]),
    )
    response = client.delete(f"/api/v1/links/{link['id']}", headers=auth)
    assert response.status_code == 200
    assert response.json() == {"data": {"id": link["id"], "deleted": True}}
    assert conn.execute("SELECT count(*) FROM clicks").fetchone()[0] == 0
    assert client.get(f"/api/v1/links/{link['id']}", headers=auth).status_code == 404
    assert client.delete(f"/api/v1/links/{link['id']}", headers=auth).status_code == 404


def make_links(client, auth, n):
    return [
        create(client, auth, originalUrl=f"https://example.com/{i}", title=f"Item {i}").json()["data"] for i in range(n)
    ]


def test_list_newest_first_and_pagination_edges(client, auth):
    links = make_links(client, auth, 5)
    response = client.get("/api/v1/links", headers=auth)
    body = response.json()
    assert [link["id"] for link in body["data"]] == [link["id"] for link in reversed(links)]
    assert body["pagination"] == {"page": 1, "limit": 20, "total": 5, "pages": 1}

    last = client.get("/api/v1/links?page=3&limit=2", headers=auth).json()
    assert [link["id"] for link in last["data"]] == [links[0]["id"]]
    assert last["pagination"] == {"page": 3, "limit": 2, "total": 5, "pages": 3}

    past = client.get("/api/v1/links?page=9&limit=2", headers=auth).json()
    assert past["data"] == [] and past["pagination"] == {"page": 9, "limit": 2, "total": 5, "pages": 3}

    one = client.get("/api/v1/links?limit=1", headers=auth).json()
    assert len(one["data"]) == 1 and one["pagination"]["pages"] == 5
    hundred = client.get("/api/v1/links?limit=100", headers=auth).json()
    assert len(hundred["data"]) == 5


def test_list_empty_account(client, auth):
    assert client.get("/api/v1/links", headers=auth).json() == {
        "data": [],
        "pagination": {"page": 1, "limit": 20, "total": 0, "pages": 0},
    }


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=abc", "page"),
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=x", "limit"),
        ("platform=MYSPACE", "platform"),
        ("isActive=maybe", "isActive"),
    ],
)
def test_bad_list_parameters_are_400_naming_them(client, auth, query, param):
    response = client.get(f"/api/v1/links?{query}", headers=auth)
    assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR"
    assert param in response.json()["error"]["message"]


def test_list_filters(client, auth):
    yt = create(client, auth, originalUrl="https://youtu.be/dQw4w9WgXcQ", title="Music video").json()["data"]
    shop = create(
        client, auth, originalUrl="https://www.amazon.de/dp/B000000000", title="50% OFF_sale", customCode="Shop_1"
    ).json()["data"]
    plain = create(client, auth, originalUrl="https://example.org/Blog", title="Blog").json()["data"]
    client.patch(f"/api/v1/links/{plain['id']}", headers=auth, json={"isActive": False})

    def ids(query):
        return {link["id"] for link in client.get(f"/api/v1/links?{query}", headers=auth).json()["data"]}

    assert ids("search=MUSIC") == {yt["id"]}
    assert ids("search=example.ORG") == {plain["id"]}
    assert ids("search=shop_") == {shop["id"]}
    assert ids("search=50%25") == {shop["id"]}
    assert ids("search=%25") == {shop["id"]}  # a literal %, not a wildcard
    assert ids("search=_") == {shop["id"]}  # a literal _, not a wildcard
    assert ids("shortCode=Shop_1") == {shop["id"]}
    assert ids("shortCode=shop_1") == set()  # exact
    assert ids("platform=YOUTUBE") == {yt["id"]}
    assert ids("platform=AMAZON") == {shop["id"]}
    assert ids("isActive=false") == {plain["id"]}
    assert ids("isActive=true") == {yt["id"], shop["id"]}
    assert ids("isActive=true&platform=OTHER") == set()


def test_daily_link_limit(make_client, new_key):
    client: TestClient = make_client(limits_links_per_day=3)
    auth = bearer(new_key())
    assert [create(client, auth).status_code for _ in range(3)] == [201, 201, 201]
    response = create(client, auth)
    assert response.status_code == 429 and error_of(response) == "RATE_LIMITED"
    retry = int(response.headers["retry-after"])
    now = datetime.now(UTC)
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)
    assert abs(retry - (midnight - now).total_seconds()) <= 5
    assert client.get("/api/v1/me", headers=auth).json()["data"]["rateLimits"]["linksCreatedToday"] == 3
    # Another account has its own allowance.
    assert create(client, bearer(new_key("second@example.com"))).status_code == 201


def test_link_without_title_is_queued_for_the_title_fetcher(client, auth, conn):
    create(client, auth)
    create(client, auth, title="Given")
    # fetcher disabled in this config: nothing is queued
    assert conn.execute("SELECT count(*) FROM pending_fetches").fetchone()[0] == 0


def test_link_without_title_is_queued_when_the_fetcher_is_on(make_client, new_key, conn):
    client = make_client(fetcher_enabled=True, fetcher_allow_private_addresses=False)
    auth = bearer(new_key())
    untitled = create(client, auth).json()["data"]
    create(client, auth, title="Given")
    assert untitled["title"] is None
    pending = conn.execute("SELECT l.public_id FROM pending_fetches p JOIN links l ON l.id = p.link_id").fetchall()
    assert [row[0] for row in pending] == [untitled["id"]]


def test_search_index_follows_creates_patches_and_deletes(client, auth):
    first = create(client, auth, originalUrl="https://example.com/a", title='Say "hello" to Ünïcode').json()["data"]
    second = create(client, auth, originalUrl="https://example.com/b", title="Plain").json()["data"]

    def ids(search):
        response = client.get("/api/v1/links", params={"search": search}, headers=auth)
        return {link["id"] for link in response.json()["data"]}

    assert ids('"hello"') == {first["id"]}  # quotes are literal text, not query syntax
    assert ids("ÜNÏCODE") == {first["id"]}  # case-insensitive beyond ASCII too
    assert ids("hello OR plain") == set()  # no query operators
    assert ids("example.com/") == {first["id"], second["id"]}
    client.patch(f"/api/v1/links/{second['id']}", headers=auth, json={"title": "Renamed hello"})
    assert ids("hello") == {first["id"], second["id"]}
    assert ids("Plain") == set()
    client.delete(f"/api/v1/links/{first['id']}", headers=auth)
    assert ids("hello") == {second["id"]}


def test_search_with_control_characters_is_answered(client, auth):
    create(client, auth, originalUrl="https://example.com/ctl", title="Control")
    for search in ("Con\x00trol", "\x00\x00\x00", "Control\x00"):
        response = client.get("/api/v1/links", params={"search": search}, headers=auth)
        assert response.status_code == 200 and isinstance(response.json()["data"], list)


def test_an_expiry_past_the_year_9999_in_utc_is_a_400_and_the_last_hour_is_accepted(client, auth):
    overflow = "9999-12-31T23:00:00-05:00"  # 10000-01-01T04:00:00Z: no datetime can hold it
    response = create(client, auth, expiresAt=overflow)
    assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR"
    assert response.json()["error"]["message"].startswith("expiresAt:")
    assert "9999" in response.json()["error"]["message"]
    link = create(client, auth).json()["data"]
    response = client.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"expiresAt": overflow})
    assert response.status_code == 400 and response.json()["error"]["message"].startswith("expiresAt:")
    assert client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]["expiresAt"] is None
    # The same wall-clock time in UTC (or east of it) is still in the year 9999: accepted.
    latest = create(client, auth, expiresAt="9999-12-31T23:00:00+00:00").json()["data"]
    assert latest["expiresAt"].startswith("9999-12-31T23:00:00")
    eastern = client.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"expiresAt": "9999-12-31T23:00:00+05:00"})
    assert eastern.status_code == 200 and eastern.json()["data"]["expiresAt"].startswith("9999-12-31T18:00:00")


def test_patch_with_a_non_boolean_is_active_changes_nothing(client, auth):
    link = create(client, auth).json()["data"]
    for value in ("false", 0, "0", "off"):
        response = client.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"isActive": value})
        assert response.status_code == 400, value
        assert response.json()["error"]["message"].startswith("isActive:")
    assert client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]["isActive"] is True


# The short URL of a link coded "abc", however the URL spells it: as a destination of
# that same link it would redirect to itself, and is refused for every URL field.
OWN_SHORT_LINKS = [
    "https://sho.rt/l/abc",
    "http://sho.rt/l/abc",
    "https://sho.rt/l/abc/",  # the router folds a trailing slash
    "https://sho.rt//l/abc",  # repeated slashes
    "https://sho.rt/x/../l/abc",  # dot segments
    "https://sho.rt/./l/abc",
    "https://sho.rt/%6C/abc",  # %-escaped "l"
    "https://sho.rt/%2Fl/abc",  # %-escaped slash
    "https://sho.rt/\\l/abc",  # a backslash, read as "/" by browsers
    "https://sho.rt./l/abc",  # trailing dot on the host
    "https://SHO.RT/l/abc",  # host case
    "https://www.sho.rt/l/abc",  # www. prefix
    "https://sho.rt:443/l/abc",  # explicit port
    "https://go.brand.example/l/abc",  # a [links] domains host
    "https://GO.Brand.Example./l/abc",
    "https://links.custom.example/l/abc",  # a connected custom domain
    "https://www.links.custom.example/l/abc",
]
# Other pages of the own hosts, other short links, or /l/ on someone else's host: accepted.
NOT_SHORT_LINKS = [
    ("https://sho.rt/", "SHORTLINK"),
    ("https://sho.rt/l", "SHORTLINK"),
    ("https://sho.rt/l/abd", "SHORTLINK"),
    ("https://sho.rt/l/ABC", "SHORTLINK"),  # codes are case-sensitive: another link
    ("https://sho.rt/about", "SHORTLINK"),
    ("https://sho.rt/L/abc", "SHORTLINK"),  # paths are case-sensitive: /L/ is not the visitor route
    ("https://sho.rt/lx/abc", "SHORTLINK"),
    ("https://sho.rt/about/l/abc", "SHORTLINK"),
    ("https://go.brand.example/pricing", "SHORTLINK"),
    ("https://links.custom.example/", "SHORTLINK"),
    ("https://sho.rt.evil.io/l/abc", "OTHER"),
    ("https://example.com/l/abc", "OTHER"),
]


@pytest.fixture
def own_hosts_client(make_client, conn, new_key):
    """The app with a [links] domains host, and an account with a connected custom domain."""
    from shortlink.accounts import service as accounts

    auth = bearer(new_key("brand@example.com"))
    accounts.add_domain(conn, "brand@example.com", "links.custom.example")
    # Connected before the server starts; one connected while it runs is picked up within
    # a second (tests/storage/test_storage.py), like every change made by another process.
    client = make_client(links_domains=["go.brand.example"])
    return client, auth


def test_a_link_to_its_own_short_url_is_refused_for_every_url_field(own_hosts_client):
    client, auth = own_hosts_client
    for url in OWN_SHORT_LINKS:
        for field in ("originalUrl", "iosUrl", "androidUrl"):
            response = create(client, auth, customCode="abc", **{field: url})
            assert response.status_code == 400, (url, field, response.text)
            assert error_of(response) == "VALIDATION_ERROR"
            message = response.json()["error"]["message"]
            assert message.startswith(f"{field}:") and "own short URL" in message, (url, field, message)
    assert client.get("/api/v1/links", headers=auth).json()["pagination"]["total"] == 0


def test_a_link_to_another_short_link_is_platform_shortlink(own_hosts_client):
    client, auth = own_hosts_client
    for number, url in enumerate(OWN_SHORT_LINKS):
        response = create(client, auth, customCode=f"chain{number}", originalUrl=url, iosUrl=url)
        assert response.status_code == 201, (url, response.text)
        assert response.json()["data"]["platform"] == "SHORTLINK", url


def test_other_pages_of_own_hosts_are_accepted_as_platform_shortlink(own_hosts_client):
    client, auth = own_hosts_client
    for url, platform in NOT_SHORT_LINKS:
        response = create(client, auth, originalUrl=url)
        assert response.status_code == 201, (url, response.text)
        assert response.json()["data"]["platform"] == platform, url
        app_urls = create(client, auth, iosUrl=url, androidUrl=url)
        assert app_urls.status_code == 201, (url, app_urls.text)


def test_links_domains_hosts_are_platform_shortlink_only_when_configured(make_client, new_key):
    auth = bearer(new_key())
    plain = make_client()
    assert create(plain, auth, originalUrl="https://go.brand.example/pricing").json()["data"]["platform"] == "OTHER"
    assert create(plain, auth, customCode="abc", originalUrl="https://go.brand.example/l/abc").status_code == 201
    configured = make_client(links_domains=["go.brand.example"])
    for url in ("https://go.brand.example/pricing", "https://WWW.go.brand.example./", "https://go.brand.example/l/x"):
        assert create(configured, auth, originalUrl=url).json()["data"]["platform"] == "SHORTLINK", url
    assert create(configured, auth, customCode="abd", originalUrl="https://go.brand.example/l/abd").status_code == 400


def test_a_page_far_past_the_end_is_empty_and_still_counts_the_links(client, auth):
    make_links(client, auth, 3)
    for page in (10**6 + 1, 2**62, 2**63, 10**27):
        response = client.get("/api/v1/links", params={"page": page, "limit": 100}, headers=auth)
        assert response.status_code == 200, (page, response.text)
        body = response.json()
        assert body["data"] == []
        assert body["pagination"] == {"page": page, "limit": 100, "total": 3, "pages": 1}


def test_long_search_and_short_code_filters_are_answered_not_refused(client, auth):
    long_url = "https://example.com/" + "x" * 2020
    link = create(client, auth, originalUrl=long_url).json()["data"]
    create(client, auth)

    def listed(**params):
        response = client.get("/api/v1/links", params=params, headers=auth)
        assert response.status_code == 200, response.text
        return [found["id"] for found in response.json()["data"]]

    assert listed(shortCode="a" * 65) == []
    assert listed(shortCode="a" * 1000) == []
    assert listed(search=long_url) == [link["id"]]  # 2040 characters
    assert listed(search=long_url + "y" * 10) == []  # 2050: longer than any URL, no match
    assert listed(search="é" * 1300) == []  # 2600 characters, 7.8 KiB escaped
    # The query string as a whole stays bounded.
    response = client.get("/api/v1/links", params={"search": "x" * 9000}, headers=auth)
    assert response.status_code == 400 and "query string" in response.json()["error"]["message"]


def test_short_non_ascii_searches_ignore_case_like_long_ones(client, auth):
    arger = create(client, auth, originalUrl="https://example.com/1", title="Ärger").json()["data"]
    omega = create(client, auth, originalUrl="https://example.com/2", title="Ωmega").json()["data"]
    plain = create(client, auth, originalUrl="https://example.com/3", title="plain").json()["data"]

    def ids(search):
        response = client.get("/api/v1/links", params={"search": search}, headers=auth)
        assert response.status_code == 200
        return {link["id"] for link in response.json()["data"]}

    # One and two characters: the scan, case-insensitive beyond ASCII.
    assert ids("ä") == ids("Ä") == {arger["id"]}
    assert ids("ω") == ids("Ω") == {omega["id"]}
    assert ids("äR") == ids("ÄR") == {arger["id"]}
    assert ids("ωM") == ids("Ωm") == {omega["id"]}
    # Three and more: the trigram index, also case-insensitive.
    assert ids("ärg") == ids("ÄRGER") == {arger["id"]}
    assert ids("ωME") == ids("ΩMEGA") == {omega["id"]}
    # Both fold letter by letter, so they agree on letters whose full case folding is longer:
    # "ß" is not "ss" to the index, nor then to the scan.
    strasse = create(client, auth, originalUrl="https://example.com/4", title="Straße").json()["data"]
    assert ids("ß") == ids("aß") == ids("straße") == ids("STRAßE") == {strasse["id"]}
    # Searches cover short codes too, and a random code may itself hold "ss".
    holding_ss = {link["id"] for link in (arger, omega, plain, strasse) if "ss" in link["shortCode"].lower()}
    assert ids("ss") == holding_ss and ids("strasse") == set()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"originalUrl": "https://evil.com\\@www.youtube.com/watch?v=dQw4w9WgXcQ"}, "originalUrl"),
        ({"originalUrl": "\x01https://example.com/"}, "originalUrl"),
        ({"originalUrl": "https://example.com/a\x00b"}, "originalUrl"),
        ({"originalUrl": "https://example.com/a\u2028b"}, "originalUrl"),
        ({"originalUrl": "https://example.com/", "androidUrl": "https://example.com/\x7f"}, "androidUrl"),
        ({"originalUrl": "https://example.com/", "title": "evil\u202etxt.exe"}, "title"),
        ({"originalUrl": "https://example.com/", "title": "a\x00b"}, "title"),
    ],
)
def test_backslash_hosts_and_control_characters_are_refused_naming_the_field(client, auth, body, field):
    response = client.post("/api/v1/links", headers=auth, json=body)
    assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR"
    assert response.json()["error"]["message"].startswith(field)
