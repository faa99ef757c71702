"""Reading title, description and image out of HTML: pure functions, no network."""

from __future__ import annotations

import pytest

from shortlink.fetcher.page import (
    MAX_DESCRIPTION_CHARS,
    MAX_TITLE_CHARS,
    clean_text,
    decode_html,
    parse_preview,
)

PAGE_URL = "https://example.com/articles/one.html"


def preview(html: str | bytes, content_type: str = "text/html; charset=utf-8", url: str = PAGE_URL):
    body = html.encode("utf-8") if isinstance(html, str) else html
    return parse_preview(body, content_type, url)


def test_og_tags_win_over_title_and_meta_description():
    result = preview("""<html><head><title>Plain title</title>
        <meta name="description" content="Plain description">
        <meta property="og:title" content="OG title">
        <meta property="og:description" content="OG description">
        <meta property="og:image" content="/img/card.png"></head><body></body></html>""")
    assert result.title == "OG title"
    assert result.description == "OG description"
    assert result.og_image == "https://example.com/img/card.png"


def test_plain_title_and_meta_description_when_no_og_tags():
    result = preview("<title>Just a page</title><meta name=Description content='About it'>")
    assert (result.title, result.description, result.og_image) == ("Just a page", "About it", None)


def test_blank_og_title_falls_back_to_title():
    assert preview('<meta property="og:title" content="   "><title>Real</title>').title == "Real"


def test_nothing_found_gives_nones():
    result = preview("<html><body><p>no head at all</p></body></html>")
    assert (result.title, result.description, result.og_image) == (None, None, None)


def test_entities_decoded_and_whitespace_collapsed():
    result = preview(
        "<title>\n  Tom &amp; Jerry&nbsp;&#8212;\t&quot;the &lt;best&gt;&quot;  \n</title>"
        '<meta name="description" content="caf&eacute; &#x263A;\n\n  ok">'
    )
    assert result.title == 'Tom & Jerry — "the <best>"'
    assert result.description == "café ☺ ok"


def test_control_characters_are_dropped():
    assert preview("<title>bell\x07 and\x00 null</title>").title == "bell and null"


def test_title_cut_to_200_and_description_to_500_characters():
    result = preview(f"<title>{'x' * 300}</title><meta name=description content='{'d' * 900}'>")
    assert result.title == "x" * MAX_TITLE_CHARS == "x" * 200
    assert result.description == "d" * MAX_DESCRIPTION_CHARS


def test_first_title_outside_inline_svg():
    html = "<svg><title>icon</title></svg><title>Page</title><title>Second</title>"
    assert preview(html).title == "Page"


def test_title_cut_off_by_the_byte_limit_is_still_used():
    assert preview("<title>Unfinished page title").title == "Unfinished page title"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://cdn.example.net/a.png", "https://cdn.example.net/a.png"),
        ("//cdn.example.net/b.png", "https://cdn.example.net/b.png"),
        ("c.png", "https://example.com/articles/c.png"),
        ("../d.png?x=1", "https://example.com/d.png?x=1"),
        ("javascript:alert(1)", None),
        ("data:image/png;base64,AAAA", None),
        ("ftp://example.com/e.png", None),
        ("", None),
    ],
)
def test_og_image_resolved_against_the_final_url_http_only(value, expected):
    assert preview(f'<meta property="og:image" content="{value}">').og_image == expected


def test_og_image_respects_base_href():
    html = '<base href="https://static.example.org/root/"><meta property="og:image" content="i.png">'
    assert preview(html).og_image == "https://static.example.org/root/i.png"


RUSSIAN = "Привет, мир"


def test_charset_from_content_type_header():
    body = f"<title>{RUSSIAN}</title>".encode("windows-1251")
    assert preview(body, "text/html; charset=windows-1251").title == RUSSIAN


def test_charset_from_meta_charset():
    body = f'<html><head><meta charset="windows-1251"><title>{RUSSIAN}</title>'.encode("windows-1251")
    assert preview(body, "text/html").title == RUSSIAN


def test_charset_from_http_equiv():
    body = (f'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r"><title>{RUSSIAN}</title>').encode(
        "koi8-r"
    )
    assert preview(body, "text/html").title == RUSSIAN


def test_header_charset_wins_over_meta():
    body = f'<meta charset="iso-8859-1"><title>{RUSSIAN}</title>'.encode()
    assert preview(body, 'text/html; charset="UTF-8"').title == RUSSIAN


def test_unknown_charset_label_falls_back_to_utf8():
    body = f"<title>{RUSSIAN}</title>".encode()
    assert preview(body, "text/html; charset=no-such-charset").title == RUSSIAN


def test_no_charset_utf8_then_windows_1252():
    assert preview("<title>naïve</title>".encode(), "text/html").title == "naïve"
    assert preview("<title>naïve</title>".encode("windows-1252"), "text/html").title == "naïve"


def test_utf8_cut_inside_a_character_stays_utf8():
    body = "<title>日本語</title><p>".encode() + "語".encode()[:2]
    assert decode_html(body, "text/html").startswith("<title>日本語</title>")


def test_byte_order_mark_decides():
    body = "\ufeff<title>été</title>".encode("utf-16-le")
    assert preview(body, "text/html; charset=iso-8859-1").title == "été"


def test_clean_text_empty_is_none():
    assert clean_text(" \n\t ", 10) is None
    assert clean_text(None, 10) is None
