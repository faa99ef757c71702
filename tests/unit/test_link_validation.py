"""Property tests for the link rules (pure functions, no HTTP)."""

from __future__ import annotations

import string
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shortlink.application.hosts import Hosts
from shortlink.errors import ValidationError
from shortlink.links import passwords as link_passwords
from shortlink.links import validation

CODE_CHARS = string.ascii_letters + string.digits + "_-"


@given(st.text(alphabet=CODE_CHARS, min_size=3, max_size=32))
def test_codes_of_the_allowed_alphabet_pass_unless_reserved(code):
    if code.lower() in validation.RESERVED_CODES:
        with pytest.raises(ValidationError):
            validation.validate_custom_code(code)
    else:
        assert validation.validate_custom_code(code) == code


@given(st.text(min_size=0, max_size=40))
def test_any_code_outside_the_pattern_is_a_validation_error(code):
    valid = 3 <= len(code) <= 32 and all(ch in CODE_CHARS for ch in code)
    if valid and code.lower() not in validation.RESERVED_CODES:
        assert validation.validate_custom_code(code) == code
    else:
        with pytest.raises(ValidationError) as caught:
            validation.validate_custom_code(code)
        assert caught.value.field == "customCode"


@given(st.text(max_size=300))
@settings(max_examples=300)
def test_url_validation_never_crashes_and_accepts_only_http_urls(text):
    try:
        validation.validate_url("originalUrl", text)
    except ValidationError as error:
        assert error.field == "originalUrl"
    else:
        assert text.lower().startswith(("http://", "https://"))


# Host labels may not end with a hyphen (RFC 1123), so the generator doesn't make them.
@given(
    st.from_regex(r"https?://[a-z]([a-z0-9-]{0,19}[a-z0-9])?\.(com|org|io|de)(/[a-zA-Z0-9_./-]{0,40})?", fullmatch=True)
)
def test_ordinary_urls_are_accepted(url):
    assert validation.validate_url("originalUrl", url) == url


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com",
        "http://localhost:8080/x",
        "https://127.0.0.1/",
        "https://[::1]:443/a",
        "https://bücher.de/straße",
        "https://a.b.c.example.co.uk/path?q=1#f",
    ],
)
def test_real_hosts(url):
    assert validation.validate_url("u", url) == url


@pytest.mark.parametrize(
    "url",
    [
        "https://",
        "https://-bad-.com",
        "https://exa_mple.com",
        "https://example",
        "https://1.2.3",
        "https://example.com:99999/",
        "mailto:a@b.c",
        "data:text/html,hi",
        "//example.com",
        "https://example.com/\nx",
        " https://example.com",
    ],
)
def test_fake_hosts_and_schemes(url):
    with pytest.raises(ValidationError):
        validation.validate_url("u", url)


def test_random_codes_are_six_url_safe_characters_and_vary():
    codes = {validation.random_code() for _ in range(200)}
    assert len(codes) == 200
    assert all(len(code) == 6 and code.isalnum() and code.isascii() for code in codes)


def test_future_times():
    now = datetime(2030, 1, 1, tzinfo=UTC)
    assert validation.parse_future_time("e", "2030-01-02T00:00:00+02:00", now) == now + timedelta(hours=22)
    for text in ["2029-12-31T23:59:59Z", "2030-01-01T00:00:00Z", "2030-01-02", "2030-01-02T00:00:00", "soon"]:
        with pytest.raises(ValidationError):
            validation.parse_future_time("e", text, now)


def test_password_hash_round_trip_and_salting():
    first, second = link_passwords.hash_password("correct horse"), link_passwords.hash_password("correct horse")
    assert first != second and "correct horse" not in first
    assert link_passwords.verify_password("correct horse", first) and link_passwords.verify_password(
        "correct horse", second
    )
    assert not link_passwords.verify_password("wrong horse", first)
    assert not link_passwords.verify_password("x", "not a hash")


@pytest.mark.parametrize(
    "text", ["9999-12-31T23:00:00-05:00", "9999-12-31T23:59:59.999999-00:01", "9999-12-31T01:00:00-23:00"]
)
def test_future_times_past_the_year_9999_in_utc_are_a_validation_error(text):
    now = datetime(2030, 1, 1, tzinfo=UTC)
    with pytest.raises(ValidationError) as caught:
        validation.parse_future_time("expiresAt", text, now)
    assert caught.value.field == "expiresAt" and "9999" in caught.value.message
    assert validation.parse_future_time("e", "9999-12-31T23:59:59+00:00", now).tzinfo == UTC


OWN_HOSTS = Hosts("", ["sho.rt", "go.brand.example:8443"]).is_ours


@given(path=st.text(max_size=30), code=st.text(alphabet=CODE_CHARS, min_size=3, max_size=32))
@settings(max_examples=300)
def test_any_path_on_a_foreign_host_is_not_the_link_itself(path, code):
    validation.refuse_link_to_itself("originalUrl", "https://example.com/" + path, OWN_HOSTS, code)
    validation.refuse_link_to_itself("originalUrl", "https://sho.rt.example.com/l/" + code, OWN_HOSTS, code)


@given(
    code=st.text(alphabet=CODE_CHARS, min_size=3, max_size=32),
    host=st.sampled_from(["sho.rt", "SHO.RT.", "www.sho.rt", "go.brand.example", "go.brand.example:8443"]),
    prefix=st.sampled_from(["/l/", "//l/", "/l//", "/%6c/", "/%6C/", "/a/../l/", "/./l/", "/\\l\\", "/%2fl/"]),
    suffix=st.sampled_from(["", "/", "?utm_source=x", "#top"]),
)
def test_every_spelling_of_the_links_own_short_url_is_refused(code, host, prefix, suffix):
    with pytest.raises(ValidationError) as caught:
        validation.refuse_link_to_itself("iosUrl", f"https://{host}{prefix}{code}{suffix}", OWN_HOSTS, code)
    assert caught.value.field == "iosUrl"


@given(
    code=st.text(alphabet=CODE_CHARS, min_size=3, max_size=32),
    other=st.text(alphabet=CODE_CHARS, min_size=1, max_size=32),
    rest=st.from_regex(r"[A-Za-z0-9_-]{0,10}(/[A-Za-z0-9_-]{0,10}){0,3}", fullmatch=True),
)
def test_other_short_links_and_pages_of_own_hosts_are_allowed(code, other, rest):
    assume(other != code)
    validation.refuse_link_to_itself("originalUrl", f"https://sho.rt/l/{other}", OWN_HOSTS, code)
    assume(rest != "l" and not rest.startswith("l/"))  # pages outside the visitor route
    validation.refuse_link_to_itself("originalUrl", f"https://sho.rt/{rest}", OWN_HOSTS, code)


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.com\\@www.youtube.com/watch?v=dQw4w9WgXcQ",  # browsers go to evil.com
        "https://www.youtube.com\\.evil.com/",
        "https:\\\\evil.com/",
        "https://evil.com\\?@www.youtube.com/",
    ],
)
def test_a_backslash_before_the_path_is_refused(url):
    with pytest.raises(ValidationError, match="backslash") as caught:
        validation.validate_url("originalUrl", url)
    assert caught.value.field == "originalUrl"


def test_a_backslash_in_the_path_query_or_fragment_is_allowed():
    for url in ("https://example.com/a\\b", "https://example.com/?q=a\\b", "https://example.com/#a\\b"):
        assert validation.validate_url("originalUrl", url) == url


INVISIBLE = ["\x00", "\x01", "\x0b", "\x1b", "\x7f", "\x85", "\u2028", "\u2029", "\u202e", "\u2066"]


@pytest.mark.parametrize("character", INVISIBLE)
def test_control_and_line_break_characters_are_refused_in_urls_and_titles(character):
    with pytest.raises(ValidationError, match=f"U\\+{ord(character):04X}") as caught:
        validation.validate_url("iosUrl", f"https://example.com/a{character}b")
    assert caught.value.field == "iosUrl"
    with pytest.raises(ValidationError) as caught:  # some are refused as white space at the start
        validation.validate_url("iosUrl", f"{character}https://example.com/")
    assert caught.value.field == "iosUrl"
    with pytest.raises(ValidationError, match="control characters") as caught:
        validation.validate_title(f"A title{character}with it")
    assert caught.value.field == "title"


def test_titles_in_any_script_with_emoji_pass():
    for title in ("Привет, мир", "مرحبا بالعالم", "日本語のタイトル", "Café 👋🏽 — “quoted”"):
        assert validation.validate_title(title) == title
