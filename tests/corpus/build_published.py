"""Rebuild the published user-agent corpora (see README.md beside this file).

    pip install crawler-user-agents==VERSION device_detector==VERSION pyyaml
    python tests/corpus/build_published.py

The agents outside our rule sources (unlisted.json, unlisted_heldback.json) come from
crawlerdetect's test fixtures, which only its source archive ships:

    pip download --no-deps --no-binary :all: crawlerdetect==0.4.2 && tar xzf crawlerdetect-0.4.2.tar.gz
    python tests/corpus/build_published.py --unlisted crawlerdetect-0.4.2/tests/fixtures/user_agent/crawlers.txt

Every agent goes to the tuning file or to the held-back file by a hash of the agent
itself, so a rebuild from a newer release keeps each known agent on its side.
"""

from __future__ import annotations

import argparse
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


def is_held_back(user_agent: str) -> bool:
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
    _write(f"{name}.json", [row for row in rows if not is_held_back(row["ua"])])
    _write(f"{name}_heldback.json", [row for row in rows if is_held_back(row["ua"])])


# Agents reported as counted as people, or named by services' documentation; none is in crawlerdetect's
# fixtures or our sources.
DOCUMENTED = {
    "PostmanRuntime/7.29.0": "reported as counted as people",
    "Java/1.8.0_121": "reported as counted as people",
    "GuzzleHttp/7": "reported as counted as people",
    "PycURL/7.13.2": "reported as counted as people",
    "Apache Httpclient": "reported as counted as people",
    "PHP/5.3.84": "reported as counted as people",
    "Is is up? (+https://isitup.org)": "reported as counted as people",
    "Mozilla/5.0 (X11; Linux x86_64; Splunk Synthetics) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/91.0.4472.114 Safari/537.36": "Splunk Synthetics Terraform provider (its tests' user_agent)",
    "Mozilla/5.0 (compatible; Windows NT 6.1; Catchpoint) AppleWebKit/537.36 (KHTML like Gecko) "
    "Chrome/43.0.2357.81 Safari/537.36": "Catchpoint's agent in a public user-agent list",
    "nginx-ssl early hints": "Cloudflare docs (Early Hints fetches)",
    "Braze Sender 75e404755ae1270441f07eb238f0faf25e44dfdc": "Braze docs (Connected Content, webhooks)",
    "Go-http-client/1.1": "Go net/http default",
    "Go-http-client/2.0": "Go net/http default (HTTP/2)",
    "cloudflare-go": "Cloudflare docs (generic agents)",
    "fasthttp": "Cloudflare docs (generic agents)",
    "got (https://github.com/sindresorhus/got)": "got's default",
    "curl/8.7.1": "curl default (macOS 15)",
    "curl/7.88.1": "curl default (Debian 12)",
    "Wget/1.21.3": "Wget default (Debian 12)",
    "Wget/1.21.4": "Wget default (Ubuntu 24.04)",
    "libwww-perl/6.68": "LWP default (Debian 12)",
    "Python-urllib/3.11": "Python urllib default",
    "python-httpx/0.27.0": "httpx default",
    "python-requests/2.32.3": "requests default",
    "Python/3.11 aiohttp/3.9.5": "aiohttp default",
    "axios/1.7.2": "axios default (Node.js)",
    "node": "Node.js fetch (undici) default",
    "undici": "undici default before Node.js 18.13",
    "okhttp/4.12.0": "OkHttp default",
    "Dart/3.3 (dart:io)": "Dart HttpClient default",
    "HTTPie/3.2.2": "HTTPie default",
    "Ruby": "Ruby Net::HTTP default",
    "Faraday v2.9.0": "Faraday default",
    "Mozilla/5.0 (Windows NT; Windows NT 10.0; en-US) WindowsPowerShell/5.1.19041.4648": "PowerShell "
    "Invoke-WebRequest default",
}


def unlisted_agents(crawlerdetect_crawlers: Path) -> dict[str, str]:
    """Agents outside our two rule sources → where they were published."""
    ours = crawler_agents()
    agents = {
        line.strip(): "crawlerdetect 0.4.2 fixtures"
        for line in crawlerdetect_crawlers.read_text("utf-8", errors="replace").splitlines()
        if line.strip()
    }
    agents.update((ua, source) for ua, source in DOCUMENTED.items() if ua not in agents)
    return {ua: source for ua, source in agents.items() if ua not in ours}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--unlisted", type=Path, help="crawlerdetect's tests/fixtures/user_agent/crawlers.txt")
    args = parser.parse_args()
    for package in ("crawler-user-agents", "device_detector"):
        print(package, importlib.metadata.version(package))
    if args.unlisted:
        _split("unlisted", "source", unlisted_agents(args.unlisted))
        return
    _split("crawlers", "source", crawler_agents())
    _split("browsers", "device", browser_agents())


if __name__ == "__main__":
    main()
