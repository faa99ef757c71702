"""The small HTML pages of the visitor path: one layout, no external assets.

Everything taken from a link or a request is escaped with html.escape; URLs
given to the one script are JSON in a data block, with <, > and & escaped so
nothing can close the element. The style and the script are constants, so the
Content-Security-Policy allows exactly them by hash and nothing else.
"""

from __future__ import annotations

import json
from html import escape
from importlib.resources import files
from typing import Protocol

from shortlink.pages.csp import csp_hash, policy
from shortlink.pages.destination import display_host

SERVICE_NAME = "shortlink"
FALLBACK_DELAY_MS = 2500  # iOS: after trying the app's scheme on load
IN_APP_FALLBACK_DELAY_MS = 1500  # Android in-app browsers: after a tap on "Open in app"

STYLE = (
    ":root{color-scheme:light dark;font-family:system-ui,-apple-system,sans-serif}"
    "body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;"
    "background:Canvas;color:CanvasText}"
    "main{box-sizing:border-box;width:100%;max-width:26rem;padding:1.5rem;text-align:center}"
    "h1{font-size:1.35rem;margin:0 0 .75rem;overflow-wrap:anywhere}"
    "p{line-height:1.45;margin:0 0 1rem}"
    ".button{display:block;box-sizing:border-box;width:100%;margin:.6rem 0;padding:.85rem 1rem;"
    "border-radius:.6rem;border:1px solid #2563eb;font:inherit;font-weight:600;"
    "text-decoration:none;cursor:pointer;background:transparent;color:#2563eb}"
    ".primary{background:#2563eb;color:#fff}"
    "input{box-sizing:border-box;width:100%;padding:.75rem;font:inherit;border-radius:.5rem;"
    "border:1px solid GrayText}"
    ".error{color:#b91c1c}"
    ".where{margin:0 0 1.25rem;padding:.75rem 1rem;border:1px solid GrayText;border-radius:.6rem}"
    ".where p{margin:0}"
    ".host{margin:.25rem 0;font-size:1.3rem;overflow-wrap:anywhere}"
    ".note{font-size:.9rem}"
    "code{font-family:ui-monospace,monospace;overflow-wrap:anywhere}"
    "footer{margin-top:2rem;font-size:.8rem;opacity:.7}"
    "[hidden]{display:none!important}"
    "@media (prefers-color-scheme:dark){.button{color:#93c5fd;border-color:#93c5fd}"
    ".primary{background:#93c5fd;color:#0b1220}.error{color:#fca5a5}}"
)

# Data from the #visit JSON block. With `auto`: opens it once on load and, with a
# `fallback`, goes there after `delay` ms unless the page was hidden (the app opened).
# Without: the same fallback, armed by a tap on the #app button instead.
SCRIPT = (
    "(function(){var d=JSON.parse(document.getElementById('visit').textContent),left=false;"
    "document.addEventListener('visibilitychange',function(){if(document.hidden)left=true});"
    "window.addEventListener('pagehide',function(){left=true});"
    "function arm(){left=false;if(d.fallback)setTimeout(function(){if(!left)location.replace(d.fallback)},d.delay)}"
    "if(d.auto){arm();location.href=d.auto}else document.getElementById('app').addEventListener('click',arm)})();"
)

# The in-app page's "Copy link" (iOS on a plain-http short host): shown only where the clipboard
# can be written; the link's text stays there to press and hold.
COPY_SCRIPT = files("shortlink.pages").joinpath("static/copy-link.js").read_text(encoding="utf-8").strip()


class Plan(Protocol):
    """What a page offers (visits.appurls makes it): the website, the app, the way out."""

    @property
    def location(self) -> str: ...  # the website ("Continue")

    @property
    def app_url(self) -> str | None: ...  # "Open in app" (the App Store's on the store page)

    @property
    def auto_url(self) -> str | None: ...  # opened once by the page on load

    @property
    def escape_url(self) -> str | None: ...  # "Open in browser"

    @property
    def fallback(self) -> str | None: ...  # where the page goes when the app did not open

    @property
    def copy_url(self) -> str | None: ...  # the short URL to copy into the browser


# form-action also governs the redirects that answer a form: the password form posts
# to our own URL, whose answer redirects to the link's destination (any http(s) site,
# or an Android intent). With 'self' alone browsers block that redirect (found by the
# headless Chromium test).
CONTENT_SECURITY_POLICY = policy(
    style=csp_hash(STYLE),
    script=f"{csp_hash(SCRIPT)} {csp_hash(COPY_SCRIPT)}",
    form_action="'self' https: http: intent:",
)
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Vary": "User-Agent, Sec-CH-UA-Platform, Sec-CH-UA-Mobile",
    "X-Robots-Tag": "noindex",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "X-Content-Type-Options": "nosniff",
}


def script_json(data: dict) -> str:
    """JSON that is safe inside a <script> element: nothing in it can end the element."""
    return json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _button(href: str, label: str, primary: bool = False, element_id: str = "") -> str:
    css_class = "button primary" if primary else "button"
    id_attribute = f' id="{element_id}"' if element_id else ""
    return f'<a class="{css_class}"{id_attribute} href="{escape(href)}">{escape(label)}</a>'


def _script(plan: Plan, delay: int) -> str:
    """The data block and the script, when the plan has anything for the script to do."""
    if plan.auto_url is None and plan.fallback is None:
        return ""
    data = script_json({"auto": plan.auto_url, "fallback": plan.fallback, "delay": delay})
    return f'<script id="visit" type="application/json">{data}</script><script>{SCRIPT}</script>'


def _where(url: str, title: str | None = None) -> str:
    """Where the link leads: the registrable host in bold, the punycode form when it reads
    differently, a warning for plain http, and the link's title when given."""
    host = display_host(url)
    if host is None:
        return ""
    named = f'<p class="note">{escape(title)}</p>' if title else ""
    spelled = f'<p class="note">Spelled <code>{escape(host.ascii)}</code></p>' if host.differs else ""
    plain = "" if host.secure else '<p class="note">Not encrypted (http)</p>'
    return (
        f'<div class="where"><p>This link leads to</p>{named}'
        f'<p class="host">{escape(host.subdomains)}<strong>{escape(host.registrable)}</strong>{escape(host.port)}</p>'
        f"{spelled}{plain}</div>"
    )


def _layout(heading: str, body: str, extra_head: str = "") -> str:
    """A complete page; `body` is already-escaped HTML, `heading` plain text."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta name="robots" content="noindex">'
        f"<title>{escape(heading)} · {SERVICE_NAME}</title><style>{STYLE}</style>{extra_head}"
        f"</head><body><main><h1>{escape(heading)}</h1>{body}"
        f"<footer>{SERVICE_NAME}</footer></main></body></html>"
    )


def _message(heading: str, text: str) -> str:
    return _layout(heading, f"<p>{escape(text)}</p>")


def not_found_page() -> str:
    return _message("Link not found", "There is no link at this address. Check it for typos.")


def paused_page() -> str:
    return _message("Link unavailable", "This link is currently unavailable.")


def expired_page() -> str:
    return _message("Link expired", "This link has expired and no longer leads anywhere.")


def not_yet_page(opens_at: str) -> str:
    """Link rules' start time: the link exists and will open (never a 404)."""
    return _message("Not open yet", f"This link opens on {opens_at}. Please come back then.")


def capped_page() -> str:
    """Link rules' cap on human clicks, reached."""
    return _message("Link unavailable", "This link has reached its limit of visits and no longer leads anywhere.")


def password_page(destination: str, title: str | None, error: str | None = None) -> str:
    # No action attribute: the form posts to this very URL, query (utm_*) included.
    notice = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    form = (
        '<form method="post">'
        '<p><label for="password">This link is protected. Enter its password to continue.</label></p>'
        '<p><input id="password" name="password" type="password" autocomplete="current-password" '
        "required autofocus></p>"
        '<button class="button primary" type="submit">Continue</button></form>'
    )
    return _layout("Password required", _where(destination, title) + notice + form)


def too_many_attempts_page(retry_after: int) -> str:
    wait = f"{retry_after} seconds" if retry_after < 120 else f"{-(-retry_after // 60)} minutes"
    return _message("Too many attempts", f"Too many wrong passwords. Try again in {wait}.")


def ios_page(plan: Plan, title: str | None, destination: str) -> str:
    body = (
        _where(destination)
        + "<p>Opening the app… If nothing happens, continue to the website.</p>"
        + _button(plan.app_url or plan.location, "Open in app", primary=True, element_id="app")
        + _button(plan.location, "Continue to website")
        + _script(plan, FALLBACK_DELAY_MS)
    )
    return _layout(title or "Opening the app", body)


def store_page(plan: Plan, title: str | None, destination: str) -> str:
    body = (
        _where(destination)
        + "<p>If the App Store does not open by itself, use the button.</p>"
        + _button(plan.app_url or plan.location, "Open in the App Store", primary=True)
    )
    if plan.location != plan.app_url:
        body += _button(plan.location, "Continue to website")
    return _layout(title or "Opening the App Store", body + _script(plan, FALLBACK_DELAY_MS))


def in_app_page(plan: Plan, title: str | None, destination: str) -> str:
    """The in-app browser's page: its app, the way out to the browser, or here. It names only
    what it offers: on iOS over plain http nothing opens the browser, so the link is there to copy."""
    if not plan.app_url:
        text = "Open this link in your browser, or continue here."
    elif plan.escape_url:
        text = "Open this link in its app or in your browser, or continue here."
    elif plan.copy_url:
        text = "Open this link in its app, or continue here. To open it in your browser, copy the link below."
    else:
        text = "Open this link in its app, or continue here."
    buttons = _button(plan.app_url, "Open in app", primary=True, element_id="app") if plan.app_url else ""
    if plan.escape_url:
        buttons += _button(plan.escape_url, "Open in browser", primary=not plan.app_url)
    buttons += _button(plan.location, "Continue")
    copy = ""
    if plan.copy_url:
        copy = (
            '<p class="note">Link to paste in your browser:</p>'
            f'<p><code id="short-url">{escape(plan.copy_url)}</code></p>'
            '<button class="button" id="copy" type="button" hidden>Copy link</button>'
            f'<p class="note" id="copy-status" role="status"></p><script>{COPY_SCRIPT}</script>'
        )
    body = f"{_where(destination)}<p>{text}</p>{buttons}{copy}"
    return _layout(title or "Open link", body + _script(plan, IN_APP_FALLBACK_DELAY_MS))


def own_app_page(
    app_name: str | None,
    destination: str,
    title: str | None,
    open_url: str | None,
    store_url: str | None,
    code: str | None,
) -> str:
    """A link into the account's own app: "Open in app" when the app may be opened
    from here, "Get the app" (the store), and the website. `code`: the
    deferred-deep-link code shown for the visitor to copy (iOS: the app asks for it on its
    first launch; nothing is read from the device)."""
    name = app_name or "the app"
    buttons = ""
    if open_url:
        buttons += _button(open_url, "Open in app", primary=True)
    if store_url:
        buttons += _button(store_url, "Get the app", primary=not open_url)
    buttons += _button(destination, "Continue to website")
    carry = ""
    if code:
        carry = (
            f'<p class="note"><label for="code">To land on this page after installing, copy this code and paste it'
            f" when {escape(name)} asks for it on its first start:</label></p>"
            f'<p><input id="code" readonly value="{escape(code)}"></p>'
        )
    body = f"{_where(destination)}<p>This link opens in {escape(name)}.</p>{buttons}{carry}"
    return _layout(title or f"Open in {name}", body)
