"""The small HTML pages of the visitor path, from the Jinja templates `templates/visitor_*.html`
(autoescaped, as every page of `templated.py`): one layout, no external assets.

URLs given to the one script are JSON in a data block, with <, > and & escaped so nothing can
close the element. The style and the scripts are constants, so the Content-Security-Policy
allows exactly them by hash and nothing else. Each template is compiled once, at import; a
redirect renders none.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any, Protocol

from markupsafe import Markup

from shortlink.pages.csp import csp_hash, policy
from shortlink.pages.destination import display_host
from shortlink.pages.templated import environment

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


_constants = {"style": Markup(STYLE), "script": Markup(SCRIPT), "copy_script": Markup(COPY_SCRIPT)}
_templates = {
    name: environment.get_template(f"visitor_{name}.html")
    for name in ("message", "password", "ios", "store", "in_app", "own_app")
}


def _page(template: str, heading: str, **context: Any) -> str:
    """A complete page: the template escapes `heading` and every value of `context` but Markup."""
    return _templates[template].render(heading=heading, **_constants, **context)


def _visit(plan: Plan, delay: int) -> Markup | None:
    """The script's data, when the plan has anything for the script to do."""
    if plan.auto_url is None and plan.fallback is None:
        return None
    return Markup(script_json({"auto": plan.auto_url, "fallback": plan.fallback, "delay": delay}))


def _message(heading: str, text: str) -> str:
    return _page("message", heading, text=text)


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
    return _page("password", "Password required", host=display_host(destination), title=title, error=error)


def too_many_attempts_page(retry_after: int) -> str:
    wait = f"{retry_after} seconds" if retry_after < 120 else f"{-(-retry_after // 60)} minutes"
    return _message("Too many attempts", f"Too many wrong passwords. Try again in {wait}.")


def ios_page(plan: Plan, title: str | None, destination: str) -> str:
    visit = _visit(plan, FALLBACK_DELAY_MS)
    return _page("ios", title or "Opening the app", plan=plan, host=display_host(destination), visit=visit)


def store_page(plan: Plan, title: str | None, destination: str) -> str:
    visit = _visit(plan, FALLBACK_DELAY_MS)
    return _page("store", title or "Opening the App Store", plan=plan, host=display_host(destination), visit=visit)


def in_app_page(plan: Plan, title: str | None, destination: str) -> str:
    """The in-app browser's page: its app, the way out to the browser, or here."""
    visit = _visit(plan, IN_APP_FALLBACK_DELAY_MS)
    return _page("in_app", title or "Open link", plan=plan, host=display_host(destination), visit=visit)


def own_app_page(
    app_name: str | None,
    destination: str,
    title: str | None,
    open_url: str | None,
    store_url: str | None,
    code: str | None,
) -> str:
    """A link into the account's own app: "Open in app" when the app may be opened
    from here, "Get the app" (the store), and the website."""
    name = app_name or "the app"
    return _page(
        "own_app",
        title or f"Open in {name}",
        host=display_host(destination),
        name=name,
        destination=destination,
        open_url=open_url,
        store_url=store_url,
        code=code,
    )
