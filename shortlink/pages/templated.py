"""The Jinja environment of every page a signed-out person sees (autoescape), and the bio pages'
and the public shortening form's style and script.

A page's style sheet and script are constants inserted whole, so the Content-Security-Policy
allows exactly them by hash, and nothing else. The visitor pages' are in `visitor.py`.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from shortlink.pages.csp import csp_hash, policy

SERVICE_NAME = "shortlink"

# Light and dark: system colours, with the accent lightened on dark backgrounds so that
# text keeps a 4.5:1 contrast in both.
STYLE = (
    ":root{color-scheme:light dark;font-family:system-ui,-apple-system,sans-serif;--accent:#1d4ed8;"
    "--on-accent:#fff;--muted:#4b5563;--error:#b91c1c}"
    "@media (prefers-color-scheme:dark){:root{--accent:#93c5fd;--on-accent:#0b1220;--muted:#c4c9d1;"
    "--error:#fca5a5}}"
    "body{margin:0;background:Canvas;color:CanvasText}"
    "main{box-sizing:border-box;width:100%;max-width:28rem;margin:0 auto;padding:2rem 1.25rem;text-align:center}"
    "h1{font-size:1.5rem;margin:0 0 .25rem;overflow-wrap:anywhere}"
    "h2{font-size:1.15rem;margin:2rem 0 .5rem}"
    "p{line-height:1.45;margin:0 0 1rem;overflow-wrap:anywhere}"
    ".handle,.muted{color:var(--muted)}"
    ".buttons{list-style:none;margin:1.5rem 0;padding:0}"
    ".button{display:block;box-sizing:border-box;width:100%;margin:.7rem 0;padding:.9rem 1rem;"
    "border-radius:.7rem;border:2px solid var(--accent);font:inherit;font-weight:600;text-decoration:none;"
    "cursor:pointer;background:transparent;color:var(--accent);overflow-wrap:anywhere}"
    ".button:hover{text-decoration:underline}"
    ".primary{background:var(--accent);color:var(--on-accent)}"
    "a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid var(--accent);outline-offset:2px}"
    "a{color:var(--accent)}"
    "label{font-weight:600}"
    "input{box-sizing:border-box;width:100%;padding:.75rem;font:inherit;border-radius:.5rem;"
    "border:1px solid var(--muted);background:Field;color:FieldText}"
    "form{margin-top:1.5rem}"
    ".copy{display:flex;gap:.5rem;align-items:center}.copy input{flex:1;min-width:0}"
    ".copy .button{flex:none;width:auto;margin:0;white-space:nowrap}"
    ".qr{display:block;margin:1rem auto;background:#fff;padding:.5rem;border-radius:.5rem}"
    ".error{color:var(--error);font-weight:600}"
    "footer{margin-top:2.5rem;font-size:.85rem;color:var(--muted)}"
)

# The result's copy button: shown only with JavaScript (the field can be copied by hand).
SCRIPT = (
    "(function(){var b=document.getElementById('copy'),f=document.getElementById('short-url'),"
    "s=document.getElementById('copy-status');if(!b||!navigator.clipboard)return;b.hidden=false;"
    "b.addEventListener('click',function(){navigator.clipboard.writeText(f.value).then("
    "function(){s.textContent='Copied.'},function(){f.select();s.textContent='Select and copy the link.'})})})();"
)

# The public form. img-src data: for the result's QR code, an inline SVG image.
CONTENT_SECURITY_POLICY = policy(style=csp_hash(STYLE), script=csp_hash(SCRIPT), img="data:", form_action="'self'")

# A bio page has the style sheet and links, no script and no image.
BIO_CONTENT_SECURITY_POLICY = policy(style=csp_hash(STYLE))

# The templates ship with the package and never change while it runs: each is read once,
# without a look at its file on every render.
environment = Environment(
    loader=PackageLoader("shortlink.pages", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,
)
environment.globals["service"] = SERVICE_NAME
_constants = {"style": Markup(STYLE), "script": Markup(SCRIPT)}


def render(template: str, **context: Any) -> str:
    return environment.get_template(template).render(**_constants, **context)
