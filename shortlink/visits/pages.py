"""The small HTML pages of the visitor path: one layout, no external assets.

Everything taken from a link or a request is escaped with html.escape; URLs
given to the one script are JSON in a data block, with <, > and & escaped so
nothing can close the element. The style and the script are constants, so the
Content-Security-Policy allows exactly them by hash and nothing else.
"""
from __future__ import annotations

import base64
import hashlib
import json
from html import escape

from shortlink.visits.appurls import Plan

SERVICE_NAME = "shortlink"
FALLBACK_DELAY_MS = 2500

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
    "footer{margin-top:2rem;font-size:.8rem;opacity:.7}"
)

# Tries the app once on load; goes to the web fallback after a while unless the
# page was hidden (the app opened). Its data comes from the #visit JSON block.
SCRIPT = (
    "(function(){var d=JSON.parse(document.getElementById('visit').textContent),left=false;"
    "document.addEventListener('visibilitychange',function(){if(document.hidden)left=true});"
    "window.addEventListener('pagehide',function(){left=true});"
    "setTimeout(function(){if(!left)location.replace(d.fallback)},d.delay);"
    "location.href=d.app})();"
)


def csp_hash(source: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()


# form-action also governs the redirects that answer a form: the password form posts
# to our own URL, whose answer redirects to the link's destination (any http(s) site,
# or an Android intent). With 'self' alone browsers block that redirect (found by the
# headless Chromium test).
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src '{csp_hash(STYLE)}'; script-src '{csp_hash(SCRIPT)}'; "
    "form-action 'self' https: http: intent:; base-uri 'none'; frame-ancestors 'none'"
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
    return (json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026"))


def _button(href: str, label: str, primary: bool = False) -> str:
    css_class = "button primary" if primary else "button"
    return f'<a class="{css_class}" href="{escape(href)}">{escape(label)}</a>'


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


def password_page(error: str | None = None) -> str:
    # No action attribute: the form posts to this very URL, query (utm_*) included.
    notice = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    form = (
        '<form method="post">'
        '<p><label for="password">This link is protected. Enter its password to continue.</label></p>'
        '<p><input id="password" name="password" type="password" autocomplete="current-password" '
        'required autofocus></p>'
        '<button class="button primary" type="submit">Continue</button></form>'
    )
    return _layout("Password required", notice + form)


def too_many_attempts_page(retry_after: int) -> str:
    wait = f"{retry_after} seconds" if retry_after < 120 else f"{-(-retry_after // 60)} minutes"
    return _message("Too many attempts", f"Too many wrong passwords. Try again in {wait}.")


def ios_page(plan: Plan, title: str | None) -> str:
    body = "<p>Opening the app… If nothing happens, continue to the website.</p>"
    if plan.app_url:
        data = script_json({"app": plan.app_url, "fallback": plan.location,
                            "delay": FALLBACK_DELAY_MS})
        body += (_button(plan.app_url, "Open in app", primary=True)
                 + f'<script id="visit" type="application/json">{data}</script>'
                 + f"<script>{SCRIPT}</script>")
    return _layout(title or "Opening the app", body + _button(plan.location, "Continue to website"))


def in_app_page(plan: Plan, title: str | None) -> str:
    buttons = []
    if plan.app_url:
        buttons.append(_button(plan.app_url, "Open in app", primary=True))
    if plan.escape_url:
        buttons.append(_button(plan.escape_url, "Open in browser"))
    buttons.append(_button(plan.location, "Continue"))
    body = "<p>Open this link in its app or in your browser, or continue here.</p>" + "".join(buttons)
    return _layout(title or "Open link", body)
