"""Cold cost of the visitor classifier and of the analytics labels, per user agent.

Run: .venv/bin/python -m bench.classify

Both are memoised, so a repeated agent costs a dictionary look-up; this measures the
first sight of each agent of the published corpora (tests/corpus/), rules compiled first.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from shortlink.visits import automated, enrich
from shortlink.visits.classify import classify

CORPUS = Path(__file__).parent.parent / "tests" / "corpus"


def agents(name: str) -> list[str]:
    return [row["ua"] for row in json.loads((CORPUS / f"{name}.json").read_text("utf-8"))]


def per_agent_us(function, user_agents: list[str]) -> float:
    started = time.perf_counter()
    for user_agent in user_agents:
        function(user_agent)
    return (time.perf_counter() - started) / len(user_agents) * 1e6


def main() -> None:
    started = time.perf_counter()
    automated.warm_up()
    enrich.warm_up()
    print(f"rules loaded and compiled in {time.perf_counter() - started:.2f} s")
    browsers = agents("browsers")
    for name, user_agents in (
        ("real browsers", browsers),
        ("crawlers", agents("crawlers")),
        ("unlisted", agents("unlisted")),
    ):
        classify.cache_clear()
        enrich.user_agent_labels.cache_clear()
        print(
            f"{name:14} ({len(user_agents)}): classify {per_agent_us(classify, user_agents):6.0f} µs/agent, "
            f"labels {per_agent_us(enrich.user_agent_labels, user_agents):6.0f} µs/agent (cold)"
        )
    print(f"repeat agent: classify {per_agent_us(classify, browsers[:1] * 100_000):.2f} µs")


if __name__ == "__main__":
    main()
