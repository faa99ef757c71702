"""Reading a page's title, description and preview image from its HTML (stdlib parser only)."""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass
from email.message import Message
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

MAX_TITLE_CHARS = 200  # the API's title limit
MAX_DESCRIPTION_CHARS = 500  # enough for any preview card; longer text is cut
MAX_IMAGE_URL_CHARS = 2048  # the API's URL limit
CHARSET_PRESCAN_BYTES = 4096  # where a <meta charset> must appear to count

_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


@dataclass(frozen=True)
class Preview:
    title: str | None
    description: str | None
    og_image: str | None


def parse_preview(body: bytes, content_type: str, page_url: str) -> Preview:
    """The preview of an HTML page fetched from `page_url` (the URL after redirects)."""
    parser = _PreviewParser()
    parser.feed(decode_html(body, content_type))
    parser.close()
    meta = parser.meta
    return Preview(
        title=(clean_text(meta.get("og:title"), MAX_TITLE_CHARS) or clean_text(parser.title, MAX_TITLE_CHARS)),
        description=(
            clean_text(meta.get("og:description"), MAX_DESCRIPTION_CHARS)
            or clean_text(meta.get("description"), MAX_DESCRIPTION_CHARS)
        ),
        og_image=absolute_http_url(meta.get("og:image"), urljoin(page_url, parser.base_href or "")),
    )


def decode_html(body: bytes, content_type: str) -> str:
    """Charset from a BOM, then the Content-Type header, then <meta charset> /
    http-equiv; else UTF-8, falling back to windows-1252 for bytes that are not UTF-8."""
    for bom, bom_encoding in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if body.startswith(bom):
            return body[len(bom) :].decode(bom_encoding, errors="replace")
    encoding: str | None = _known_encoding(_header_charset(content_type))
    if encoding is None:
        found = _META_CHARSET.search(body[:CHARSET_PRESCAN_BYTES])
        encoding = _known_encoding(found.group(1).decode("ascii") if found else None)
        if encoding is not None and encoding.startswith("utf-16"):
            encoding = "utf-8"  # a page that reads its own meta as ASCII is not UTF-16
    if encoding is not None:
        return body.decode(encoding, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A page cut at the byte limit may end inside a character: that alone is not a reason
        # to switch encodings.
        if exc.start >= len(body) - 3 and exc.reason == "unexpected end of data":
            return body[: exc.start].decode("utf-8")
        return body.decode("windows-1252", errors="replace")


def _header_charset(content_type: str) -> str | None:
    message = Message()
    message["content-type"] = content_type
    charset = message.get_param("charset")
    return charset if isinstance(charset, str) else None


def _known_encoding(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name.strip().strip("\"'")).name
    except LookupError:
        return None


def clean_text(text: str | None, limit: int) -> str | None:
    """Whitespace collapsed, control characters dropped, cut to `limit` characters; None if empty."""
    if text is None:
        return None
    visible = "".join(ch for ch in text if unicodedata.category(ch) != "Cc" or ch.isspace())
    collapsed = " ".join(visible.split())[:limit].rstrip()
    return collapsed or None


def absolute_http_url(value: str | None, base_url: str) -> str | None:
    if not value or not value.strip():
        return None
    try:
        url = urljoin(base_url, value.strip())
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc or len(url) > MAX_IMAGE_URL_CHARS:
        return None
    if any(ch.isspace() for ch in url):
        return None
    return url


class _PreviewParser(HTMLParser):
    """Collects the first <title> (outside inline SVG), <base href> and the first of each meta tag."""

    def __init__(self):
        super().__init__(convert_charrefs=True)  # entities decoded in text and attributes
        self.title: str | None = None
        self.base_href: str | None = None
        self.meta: dict[str, str] = {}
        self._title_parts: list[str] | None = None
        self._svg_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "svg":
            self._svg_depth += 1
        elif tag == "title" and self.title is None and self._svg_depth == 0:
            self._title_parts = []
        elif tag == "base" and self.base_href is None:
            self.base_href = dict(attrs).get("href")
        elif tag == "meta":
            self._meta(dict(attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "svg":  # <svg/> opens nothing
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg" and self._svg_depth:
            self._svg_depth -= 1
        elif tag == "title" and self._title_parts is not None:
            self.title = "".join(self._title_parts)
            self._title_parts = None

    def handle_data(self, data: str) -> None:
        if self._title_parts is not None:
            self._title_parts.append(data)

    def close(self) -> None:
        super().close()
        if self._title_parts is not None:  # a page cut short inside <title>
            self.title = "".join(self._title_parts)
            self._title_parts = None

    def _meta(self, attrs: dict[str, str | None]) -> None:
        key = (attrs.get("property") or attrs.get("name") or "").strip().lower()
        content = attrs.get("content")
        if key in ("og:title", "og:description", "og:image", "description") and content:
            self.meta.setdefault(key, content)
