"""axe-core accessibility checks on a Playwright page (sync API).

axe-playwright-python ships axe-core's own JavaScript inside the wheel (axe.min.js) and
injects it with page.evaluate, so nothing is fetched at run time and the page's
Content-Security-Policy does not block it (evaluation through the DevTools protocol is not
subject to the page's script-src).
"""

from __future__ import annotations

from typing import Any

from axe_playwright_python.sync_playwright import Axe

from tests.support.browser import keep_screenshot

# The impacts a person would be stopped by; "minor" and "moderate" are advice, not failures.
BLOCKING_IMPACTS = ("serious", "critical")
# Moderate rules checked all the same: two landmarks of one name leave a screen reader's list of
# regions with two entries it cannot tell apart.
ALWAYS_CHECKED = ("landmark-unique",)

_AXE = Axe()


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """The serious and critical axe-core violations on the page as it is now, and those of
    ALWAYS_CHECKED whatever their impact.

    Each is {"id", "impact", "help", "helpUrl", "targets"}, where targets holds one CSS
    selector path per failing element, so a failed assertion says where to look.
    """
    # Injected once per document: checked again (another colour scheme, after a change), the
    # page keeps the copy it has.
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(_AXE.axe_script)
    response = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        {
            "id": violation["id"],
            "impact": violation["impact"],
            "help": violation["help"],
            "helpUrl": violation.get("helpUrl", ""),
            "targets": [node["target"] for node in violation["nodes"]],
        }
        for violation in response["violations"]
        if violation["impact"] in BLOCKING_IMPACTS or violation["id"] in ALWAYS_CHECKED
    ]


def light_and_dark_problems(page: Any, where: tuple[str, ...], screenshot: str) -> list[tuple[Any, ...]]:
    """axe's violations and any sideways overflow of the page as loaded, in the light colour
    scheme and then the dark one: each problem is `where` + (scheme, what). Both schemes on one
    load is the same as loading it in each, since only the style sheets read the scheme (no
    script does); that the scheme changed the page is checked. Screenshots `<screenshot>-<scheme>`
    when kept."""
    problems: list[tuple[Any, ...]] = []
    backgrounds = {}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        backgrounds[scheme] = page.evaluate("getComputedStyle(document.body).backgroundColor")
        problems += [(*where, scheme, v["id"], v["targets"][:3]) for v in axe_violations(page)]
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        if overflow > 0:
            problems.append((*where, scheme, f"{overflow} px wider than the window"))
        keep_screenshot(page, f"{screenshot}-{scheme}", full_page=True)
    assert backgrounds["light"] != backgrounds["dark"], (where, backgrounds)
    return problems
