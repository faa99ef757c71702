"""utm_* forwarding from the short URL's query onto the destination."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shortlink.visits.utm import forward_utm, utm_params


@pytest.mark.parametrize(
    ("destination", "query", "expected"),
    [
        # No utm parameters: the destination exactly as stored.
        ("https://example.com/a?b=1#top", "", "https://example.com/a?b=1#top"),
        ("https://example.com/a?b=1#top", "ref=x&iab=1", "https://example.com/a?b=1#top"),
        ("https://example.com/a?b=%2F+x", "utmsource=x", "https://example.com/a?b=%2F+x"),
        # Added after the destination's own parameters, fragment kept.
        ("https://example.com/a?b=1#top", "utm_source=news", "https://example.com/a?b=1&utm_source=news#top"),
        (
            "https://example.com/",
            "utm_source=news&utm_medium=email",
            "https://example.com/?utm_source=news&utm_medium=email",
        ),
        ("https://example.com", "utm_campaign=spring", "https://example.com?utm_campaign=spring"),
        # Same-named ones replaced (all of them), others kept with their exact spelling.
        (
            "https://example.com/p?utm_source=old&x=1&utm_source=older#frag",
            "utm_source=new",
            "https://example.com/p?x=1&utm_source=new#frag",
        ),
        (
            "https://example.com/p?q=a+b&r=%C3%A4&utm_medium=x",
            "utm_medium=y&other=1",
            "https://example.com/p?q=a+b&r=%C3%A4&utm_medium=y",
        ),
        # Values are re-encoded; a blank value is forwarded; the last repeated value wins.
        ("https://example.com/", "utm_term=a%20b%26c", "https://example.com/?utm_term=a%20b%26c"),
        ("https://example.com/", "utm_content=", "https://example.com/?utm_content="),
        ("https://example.com/", "utm_source=a&utm_source=b", "https://example.com/?utm_source=b"),
        ("https://example.com/", "utm_=x", "https://example.com/"),
        ("https://example.com/", "utm_source=%22%3E%3Cscript%3E", "https://example.com/?utm_source=%22%3E%3Cscript%3E"),
    ],
)
def test_forward_utm(destination, query, expected):
    assert forward_utm(destination, query) == expected


def test_utm_params_keeps_only_named_utm_parameters():
    assert utm_params("a=1&utm_source=x&UTM_medium=y&utm_=z&utm_term=") == {"utm_source": "x", "utm_term": ""}
    assert utm_params("no=utm&here=1") == {}


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_destinations = st.builds(
    lambda path, params, fragment: (
        "https://example.com/"
        + path
        + ("?" + "&".join(f"{k}={v}" for k, v in params) if params else "")
        + ("#" + fragment if fragment else "")
    ),
    st.from_regex(r"[a-z0-9/]{0,10}", fullmatch=True),
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "utm_source", "utm_medium", "x"]),
            st.from_regex(r"[A-Za-z0-9%+.-]{0,6}", fullmatch=True),
        ),
        max_size=4,
    ),
    st.from_regex(r"[a-z0-9]{0,5}", fullmatch=True),
)
_queries = st.lists(
    st.tuples(st.sampled_from(["utm_source", "utm_medium", "utm_campaign", "ref"]), _text), max_size=4
).map(lambda pairs: "&".join(f"{k}={v}" for k, v in pairs))


@given(_destinations, _queries)
def test_forwarding_is_idempotent_and_keeps_everything_else(destination, query):
    once = forward_utm(destination, query)
    assert forward_utm(once, query) == once
    before, after = urlsplit(destination), urlsplit(once)
    assert (after.scheme, after.netloc, after.path, after.fragment) == (
        before.scheme,
        before.netloc,
        before.path,
        before.fragment,
    )
    forwarded = utm_params(query)
    kept = [(k, v) for k, v in parse_qsl(before.query, keep_blank_values=True) if k not in forwarded]
    assert parse_qsl(after.query, keep_blank_values=True) == kept + list(forwarded.items())
