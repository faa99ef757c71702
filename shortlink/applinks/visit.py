"""What a visitor of a link into the account's own app gets, decided without HTTP.

As for the big apps (visits.appurls): bots and desktops go to the website. On Android the app
is opened with an intent whose fallback is the Play Store page, carrying the deferred-link
token in its install referrer; Chrome takes the intent as a redirect, other browsers and
in-app browsers get the app page ("Open in app", "Get the app"). On iOS a visitor only reaches
us when the OS did not open the app from the universal link (not installed, or an in-app
browser, which never opens universal links): the app page with "Get the app" and the code to
carry into the app.
"""

from __future__ import annotations

from collections.abc import Callable

from shortlink.applinks.deferred import app_store_url, play_store_url
from shortlink.pages import visitor as pages
from shortlink.visits.appurls import android_intent, web_uri
from shortlink.visits.cache import OwnApp
from shortlink.visits.classify import Visitor
from shortlink.visits.respond import REDIRECT_HEADERS, Reply, page

# How a visit into an own app was answered, for its analytics.
APP, STORE, WEB = "app", "store", "web"


def own_app_reply(
    app: OwnApp,
    visitor: Visitor,
    web_url: str,
    title: str | None,
    base: str,
    token: Callable[[], str],
    redirect_status: int = 302,
) -> tuple[Reply, str] | None:
    """The reply and what it decided (APP, STORE or WEB); None when the app has no part for
    this phone's OS (the link then behaves as any other). `web_url` has the utm parameters
    forwarded; `base` is this request's scheme://host."""
    web_url = web_uri(web_url)
    if visitor.is_bot or visitor.kind not in ("ios", "android"):
        return Reply(redirect_status, {"Location": web_url, **REDIRECT_HEADERS}), WEB
    if visitor.kind == "android":
        if app.package is None:
            return None
        store = play_store_url(app.package, token())
        intent = android_intent(base + app.deep_path, app.package, store)
        if visitor.in_app is None and visitor.browser == "chrome":
            # Chrome opens the app, or follows the fallback to the store when it is missing.
            return Reply(redirect_status, {"Location": intent, **REDIRECT_HEADERS}), APP
        html = pages.own_app_page(app.name, web_url, title, intent, store, None, None)
        return page(200, html), APP
    if app.app_store_id is None:
        return None
    code = token()
    html = pages.own_app_page(app.name, web_url, title, None, app_store_url(app.app_store_id), None, code)
    return page(200, html), STORE
