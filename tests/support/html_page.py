"""An HTML parser for tests: tags, attributes, script and style text, checked nesting."""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"meta", "input", "br", "img", "link"}


class Page(HTMLParser):
    """Tags, attributes, script and style text of a document, checking nesting."""

    def __init__(self, document: str):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[tuple[dict, str]] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self.anchors: list[tuple[str, str]] = []  # (href, label)
        self._raw: tuple[str, dict] | None = None
        self.feed(document)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)
        if tag in ("script", "style"):
            self._raw = (tag, dict(attrs))

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack)
        self.stack.pop()
        self._raw = None

    def handle_data(self, data):
        if self._raw and self._raw[0] == "script":
            self.scripts.append((self._raw[1], data))
        elif self._raw:
            self.styles.append(data)
        else:
            self.text.append(data)
            if self.stack and self.stack[-1] == "a":
                self.anchors.append((self.tags[-1][1]["href"], data))
