"""A link's rules as lines of text, for the CLI's `links show` (and any door that prints them)."""

from __future__ import annotations

from shortlink.targeting.schema import Rule, RulesDocument


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
