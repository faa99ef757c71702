"""Rebuild the published user-agent corpora (see README.md beside this file).

    pip install crawler-user-agents==VERSION device_detector==VERSION pyyaml
    python tests/corpus/build_published.py

Every agent goes to the tuning file or to the held-back file by a hash of the agent
itself, so a rebuild from a newer release keeps each known agent on its side.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from collections.abc import Iterator
from pathlib import Path

import crawleruseragents
import device_detector
import yaml

HERE = Path(__file__).parent
FIXTURES = Path(device_detector.__file__).parent / "tests" / "fixtures" / "upstream"
HELD_BACK_ONE_IN = 5
# Real-browser fixtures are tens of thousands: a fixed-size sample of each device class
# (chosen by hash, so it is the same on every rebuild) keeps the suite fast.
BROWSER_SAMPLE = {"mobile": 3125, "tablet": 3125, "desktop": 3125}
# Matomo's device types → the analytics label a person expects.
DEVICE_LABELS = {"smartphone": "mobile", "phablet": "mobile", "tablet": "tablet", "desktop": "desktop"}


def _digest(user_agent: str) -> str:
    return hashlib.sha256(user_agent.encode()).hexdigest()


def _is_held_back(user_agent: str) -> bool:
    return int(_digest(user_agent)[-4:], 16) % HELD_BACK_ONE_IN == 0


def _fixture_rows(pattern: str) -> Iterator[dict]:
    for path in sorted(FIXTURES.glob(pattern)):
        yield from yaml.load(path.read_text("utf-8"), Loader=yaml.CSafeLoader) or []


def crawler_agents() -> dict[str, str]:
    """Every published crawler agent → where it was published."""
    agents: dict[str, str] = {}
    for entry in crawleruseragents.CRAWLER_USER_AGENTS_DATA:
        for instance in entry.get("instances", []):
            agents.setdefault(instance, "crawler-user-agents")
    for row in _fixture_rows("bots.yml"):
        agents.setdefault(str(row["user_agent"]), "device-detector bots")
    for row in _fixture_rows("feed_reader.yml"):
        agents.setdefault(str(row["user_agent"]), "device-detector feed readers")
    return {ua: source for ua, source in agents.items() if ua.strip()}


def browser_agents() -> dict[str, str]:
    """A sample of real browsers (no client hints) → their device label."""
    by_label: dict[str, set[str]] = {label: set() for label in BROWSER_SAMPLE}
    for row in _fixture_rows("*.yml"):
        client, device = row.get("client"), row.get("device")
        if row.get("headers") or not isinstance(client, dict) or not isinstance(device, dict):
            continue
        label = DEVICE_LABELS.get(device.get("type", ""))
        if label and client.get("type") == "browser":
            by_label[label].add(str(row["user_agent"]))
    sample: dict[str, str] = {}
    for label, agents in by_label.items():
        for ua in sorted(agents, key=_digest)[: BROWSER_SAMPLE[label]]:
            sample[ua] = label
    return sample


def _write(name: str, rows: list[dict]) -> None:
    lines = ",\n".join(json.dumps(row, ensure_ascii=False) for row in rows)
    (HERE / name).write_text(f"[\n{lines}\n]\n", "utf-8")
    print(name, len(rows))


def _split(name: str, field: str, agents: dict[str, str]) -> None:
    rows = [{"ua": ua, field: value} for ua, value in sorted(agents.items())]
    _write(f"{name}.json", [row for row in rows if not _is_held_back(row["ua"])])
    _write(f"{name}_heldback.json", [row for row in rows if _is_held_back(row["ua"])])


def main() -> None:
    for package in ("crawler-user-agents", "device_detector"):
        print(package, importlib.metadata.version(package))
    _split("crawlers", "source", crawler_agents())
    _split("browsers", "device", browser_agents())


if __name__ == "__main__":
    main()
