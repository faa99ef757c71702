"""axe-core accessibility checks on a Playwright page (sync API).

axe-playwright-python ships axe-core's own JavaScript inside the wheel (axe.min.js) and
injects it with page.evaluate, so nothing is fetched at run time and the page's
Content-Security-Policy does not block it (evaluation through the DevTools protocol is not
subject to the page's script-src).
"""

from __future__ import annotations

from typing import Any

from axe_playwright_python.sync_playwright import Axe

# The impacts a person would be stopped by; "minor" and "moderate" are advice, not failures.
BLOCKING_IMPACTS = ("serious", "critical")

_AXE = Axe()


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """The serious and critical axe-core violations on the page as it is now.

    Each is {"id", "impact", "help", "helpUrl", "targets"}, where targets holds one CSS
    selector path per failing element, so a failed assertion says where to look.
    """
    results = _AXE.run(page)
    return [
        {
            "id": violation["id"],
            "impact": violation["impact"],
            "help": violation["help"],
            "helpUrl": violation.get("helpUrl", ""),
            "targets": [node["target"] for node in violation["nodes"]],
        }
        for violation in results.response["violations"]
        if violation["impact"] in BLOCKING_IMPACTS
    ]
