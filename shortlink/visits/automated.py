"""Is a user agent a program rather than a person? Decided from maintained published data, and
from the shape of a person's browser for the programs no list names yet.

Two sources, each kept up to date by others, together (docs/bots.md has the rates):
- crawler-user-agents: the crawler-pattern list most tools share (search engines, SEO tools,
  monitors, AI crawlers, HTTP libraries);
- Matomo's device-detector rules for bots and feed readers (as shipped in `device_detector`):
  uptime checkers, security scanners, prefetch proxies, service agents.
crawlerdetect is not among them: on the published corpora it caught no crawler these two
miss, and it called users of old desktop browsers (AmigaVoyager, Mosaic's "libwww") bots.

A list only knows what it lists (docs/bots.md has the rates on agents outside both), so two
generic rules follow:
- a person's browser names its engine (AppleWebKit, Gecko, Trident, Presto…), or is a browser
  Matomo lists that predates engine tokens (WAP phones, text-mode and Amiga browsers): HTTP
  libraries, scripts and most services name neither;
- words only programs write, whatever else the agent says: a link or an address to read about
  the program, monitoring, synthetics, screenshots, previews, headless and scripted browsers,
  Electron apps (the app fetching the link for a preview, not the person: docs/bots.md).

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
from shortlink.visits.pattern_groups import PatternGroup, unchanged

_MATOMO_RULES = ("regexes/upstream/bots.yml", "regexes/upstream/client/feed_readers.yml")
_MATOMO_BROWSERS = "regexes/upstream/client/browsers.yml"

# An engine token, or what phones' WAP browsers and Android apps' own HTTP client (Dalvik) say
# instead: checked first because it is cheap and nearly every person's agent has one.
_ENGINE = re.compile(
    r"AppleWebKit|Gecko|Trident/|Presto/|KHTML|MSIE |Chrome/|Firefox/|Safari|Opera|Mobile|Dalvik/|MIDP|CLDC",
    re.IGNORECASE,
)

# Words only programs write in an agent, browser-shaped or not. HTTP libraries need no entry
# when they name no engine; those here also appear beside one. Lower case, matched against the
# lowercased agent: re.IGNORECASE makes so long an alternation several times slower (docs/bots.md).
_PROGRAM_WORDS = re.compile(
    r"https?://|\bwww\.|\+http|@[a-z][\w-]*\.[a-z]{2}|"  # a link or an e-mail address ("android@62.0" is neither)
    r"synthetic|monitor|uptime|pingdom|catchpoint|site24x7|statuscake|"
    r"screenshot|preview|unfurl|thumb|wkhtmlto|webkit2png|\bscan|probe|crawl|spider|scrap|fetch|checker|validator|"
    r"headless|phantomjs|selenium|webdriver|puppeteer|playwright|lighthouse|\bptst\b|gtmetrix|zombie\.js|"
    r"\bbot\b|http.?client|powershell|curl|wget|python|\bjava/|okhttp|axios|node-fetch|undici|go-http|httpie|"
    r"postman|guzzle|libwww-perl|zend_http|"
    r"electron/|slack_ssb|microsoft office|microsoft outlook|\b(?:word|excel|powerpoint)/\d"
)

# "Android 14; SM-S918B Build/UP1A.231005.007" and "Android 10; K)": the model and build id.
_ANDROID_DEVICE_SLOT = re.compile(r"(Android[ /][\d._]*; ?(?:[a-z]{2}[-_][a-z]{2}; ?)?)[^;()]*", re.IGNORECASE)
_BUILD_ID = re.compile(r"\bBuild/[^;()]*")

# A browser people use whose name contains a crawler-list word (the list's "Sogou" is
# Sogou's spider).
_PEOPLES_BROWSERS = re.compile(r"\bSogouM(?:SE|obileBrowser)\b")

# An agent carrying an exploit payload is a scanner whatever else it says: Log4Shell lookups,
# Shellshock, script or PHP injection, path traversal, SQL injection (a quote closing a string
# then OR/AND, a sub-select, a timing function), or a host of Burp Suite's out-of-band service.
# Lower case, matched against the lowercased agent, for the reason _PROGRAM_WORDS is.
_EXPLOIT_PAYLOAD = re.compile(
    r"\$\{|\(\) \{|<(?:script|\?=|\?php)|\.\./\.\./|"
    r"union\s+(?:all\s+)?select\b|\(\s*select\b|['\"]\)*\s*(?:or|and)\s+\(*[\w'\"]+\s*=|"
    r"sleep\s*\(|waitfor\s+delay|load_file\s*\(|burpcollaborator|oastify\.com"
)


# Each list is searched as its alternation would be, but a pattern is tried only on agents holding
# the literal it starts with (visits/pattern_groups.py): a fifth of the time per agent.


def matomo_rule(pattern: str) -> regex.Pattern[str]:
    # Matomo writes PCRE (variable-width look-behinds): the regex module reads it as is.
    return regex.compile(matomo.BOUNDARY + "(?:" + pattern + ")", regex.IGNORECASE)


def matomo_bot_patterns() -> list[str]:
    return [rule["regex"] for path in _MATOMO_RULES for rule in matomo.rules(path, list)]


def matomo_browser_patterns() -> list[str]:
    return [rule["regex"] for rule in matomo.rules(_MATOMO_BROWSERS, list)]


def crawler_patterns() -> list[str]:
    return [entry["pattern"] for entry in crawleruseragents.CRAWLER_USER_AGENTS_DATA]


@cache
def _matomo_rules() -> PatternGroup:
    return PatternGroup(matomo_bot_patterns(), matomo_rule)


@cache
def _matomo_browsers() -> PatternGroup:
    return PatternGroup(matomo_browser_patterns(), matomo_rule)


@cache
def _crawler_list() -> PatternGroup:
    # The list's patterns are case-sensitive by design ("Bot" in a product name is not "bot").
    return PatternGroup(crawler_patterns(), re.compile, unchanged)


def without_device_slot(user_agent: str) -> str:
    return _BUILD_ID.sub("", _ANDROID_DEVICE_SLOT.sub(r"\1", user_agent))


def has_browser_shape(user_agent: str) -> bool:
    """Names a browser engine, or a browser Matomo lists (the list runs only without an engine)."""
    return bool(_ENGINE.search(user_agent) or _matomo_browsers().search(user_agent))


def is_automated(user_agent: str, app_shaped: bool = False) -> bool:
    """True for an exploit payload, a program's words, an agent without a browser's shape, or when
    a published crawler, monitor, scanner, feed-reader or library rule matches. `app_shaped`: the
    agent was an in-app browser's own, whose app token stands for the engine it does not name."""
    if _EXPLOIT_PAYLOAD.search(user_agent.lower()):
        return True
    agent = _PEOPLES_BROWSERS.sub("", without_device_slot(user_agent))
    return bool(
        _PROGRAM_WORDS.search(agent.lower())
        or not (app_shaped or has_browser_shape(user_agent))
        or _matomo_rules().search(agent)
        or _crawler_list().search(agent)
    )


def warm_up() -> None:
    """Compile the rules now rather than on the first visitor (docs/performance.md has the cost)."""
    _matomo_rules()
    _matomo_browsers()
    _crawler_list()
