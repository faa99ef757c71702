"""The dashboard while Redis, which holds every rate limit, does not answer: a page asking to
try again shortly (503, Retry-After), never the 500 page of an unexpected error."""

from tests.support.dashboard import as_browser, make_account, sign_in


def test_a_sign_in_while_redis_is_down_is_a_503_asking_to_retry(make_client, conn, redis_server, caplog):
    make_account(conn, "owner@example.com")
    client = as_browser(make_client(redis_url=redis_server.url), short_host_overridden=False)
    assert sign_in(client, "owner@example.com").status_code == 303
    redis_server.stop()
    refused = sign_in(client, "owner@example.com")
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
    assert "try again" in refused.text.lower() and "Something went wrong" not in refused.text
    assert "unhandled error" not in caplog.text
