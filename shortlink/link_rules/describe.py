"""A link's rules as lines of text, for the CLI's `links show` (and any door that prints them),
and the tester's answer in words a person reads (the dashboard's "Try as a visitor")."""

from __future__ import annotations

from shortlink.link_rules.schema import Rule, RulesDocument, SimulatedResult

# The tester's page names (SimulatedResult.page) as a person says them.
PAGE_WORDS = {
    "ios": "the page that opens the app on an iPhone or iPad (iOS)",
    "store": "the page that opens the app's store listing",
    "in_app": "the page that helps them leave the in-app browser",
    "paused": "the paused-link page",
    "expired": "the expired-link page",
    "notYet": "the page saying the link is not open yet",
    "capped": "the page of a link that has reached its click cap",
    "password": "the password page",
}


def action_text(rule: Rule) -> str:
    if rule.url is not None:
        return rule.url
    if rule.split is not None:
        return "split " + ", ".join(f"{variant.weight}% {variant.url}" for variant in rule.split)
    assert rule.rewrite is not None
    parts = [f"table {rule.rewrite.table}"] if rule.rewrite.table else []
    parts += [f"{country}→{host}" for country, host in (rule.rewrite.hosts or {}).items()]
    return "rewrite the host by country: " + ", ".join(parts)


def rule_lines(document: RulesDocument) -> list[str]:
    """One line per rule ("0. os ios and country DE, FR → https://…"), then the limits set."""
    lines = []
    for index, rule in enumerate(document.rules):
        conditions = " and ".join(f"{c.type} {', '.join(c.values)}" for c in rule.conditions) or "every visitor"
        lines.append(f"{index}. {conditions} → {action_text(rule)}")
    for name, value in (
        ("startsAt", document.starts_at),
        ("maxClicks", document.max_clicks),
        ("fallbackUrl", document.fallback_url),
    ):
        if value is not None:
            lines.append(f"{name} {value}")
    return lines


def tried_sentences(result: SimulatedResult) -> list[tuple[str, str, str]]:
    """The tester's answer as whole sentences, each ending in a full stop, each as (text before
    the URL, the URL or "", text after): a page can set the URL apart (long URLs wrap)."""
    if result.rule is None:
        first = "No rule holds, so the link's own destination applies."
    else:
        variant = "" if result.variant is None else f", and its split picks variant {result.variant + 1}"
        first = f"Rule {result.rule + 1} holds{variant}."
    status = f" (HTTP status {result.status})"
    if result.page is None:
        return [(first, "", ""), ("The visitor is sent to ", result.location or "", f"{status}.")]
    page = f"The visitor sees {PAGE_WORDS.get(result.page, 'another page')}{status}"
    if result.location:
        return [(first, "", ""), (f"{page}, which leads to ", result.location, ".")]
    return [(first, "", ""), (f"{page}.", "", "")]
