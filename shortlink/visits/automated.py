"""Is a user agent a program rather than a person? Decided from maintained published data.

Two sources, each kept up to date by others, together (see the README for the rates):
- crawler-user-agents: the crawler-pattern list most tools share (search engines, SEO tools,
  monitors, AI crawlers, HTTP libraries);
- Matomo's device-detector rules for bots and feed readers (as shipped in `device_detector`):
  uptime checkers, security scanners, prefetch proxies, service agents.
crawlerdetect is not among them: on the published corpora it caught no crawler these two
miss, and it called users of old desktop browsers (AmigaVoyager, Mosaic's "libwww") bots.

Every list matches words anywhere in the agent, so a phone whose model is called
"Butterfly" or whose build id once belonged to a scraper would count as a bot: the device
slot of Android agents (model and build) is taken out before matching. Bots never put
their name there; they add it after the platform.
"""

from __future__ import annotations

import re
from functools import cache

import crawleruseragents
import regex

from shortlink.visits import matomo

_MATOMO_RULES = ("regexes/upstream/bots.yml", "regexes/upstream/client/feed_readers.yml")

# "Android 14; SM-S918B Build/UP1A.231005.007" and "Android 10; K)": the model and build id.
_ANDROID_DEVICE_SLOT = re.compile(r"(Android[ /][\d._]*; ?(?:[a-z]{2}[-_][a-z]{2}; ?)?)[^;()]*", re.IGNORECASE)
_BUILD_ID = re.compile(r"\bBuild/[^;()]*")

# A browser people use whose name contains a crawler-list word (the list's "Sogou" is
# Sogou's spider).
_PEOPLES_BROWSERS = re.compile(r"\bSogouM(?:SE|obileBrowser)\b")

# An agent carrying an exploit payload (Log4Shell lookups, Shellshock, script or SQL
# injection, path traversal) is a scanner whatever else it says.
_EXPLOIT_PAYLOAD = re.compile(r"\$\{|\(\) \{|<script|\.\./\.\./|\bunion\s+select\b", re.IGNORECASE)


@cache
def _matomo_rules() -> regex.Pattern[str]:
    # Matomo writes PCRE (variable-width look-behinds): the regex module reads it as is.
    patterns = [rule["regex"] for path in _MATOMO_RULES for rule in matomo.rules(path, list)]
    return regex.compile(matomo.BOUNDARY + "(?:" + "|".join(patterns) + ")", regex.IGNORECASE)


@cache
def _crawler_list() -> re.Pattern[str]:
    # The list's patterns are case-sensitive by design ("Bot" in a product name is not "bot").
    return re.compile("|".join(entry["pattern"] for entry in crawleruseragents.CRAWLER_USER_AGENTS_DATA))


def without_device_slot(user_agent: str) -> str:
    return _BUILD_ID.sub("", _ANDROID_DEVICE_SLOT.sub(r"\1", user_agent))


def is_automated(user_agent: str) -> bool:
    """True for an exploit payload or when a published crawler, monitor, scanner, feed-reader or
    library rule matches."""
    if _EXPLOIT_PAYLOAD.search(user_agent):
        return True
    agent = _PEOPLES_BROWSERS.sub("", without_device_slot(user_agent))
    return bool(_matomo_rules().search(agent) or _crawler_list().search(agent))


def warm_up() -> None:
    """Compile the rules now rather than on the first visitor (docs/performance.md has the cost)."""
    _matomo_rules()
    _crawler_list()
