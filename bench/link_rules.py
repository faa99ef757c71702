"""Link rules on the redirect path: a link with 10 rules whose visitors all match the last one,
against the same link without rules and a bare 302, in the same server and run.

Run: .venv/bin/python -m bench.link_rules [--rounds 3] [--seconds 5] [--connections 64]. Needs wrk.
The three endpoints are measured in alternating rounds with the same mix of real desktop user
agents and Accept-Language headers (a wrk script rotates them), so that a slow spell of the
machine hits all three alike; the medians give the ratios. Targets: the ruled link >= 95% of the
plain one; the plain link >= 85% of the bare 302.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from bench.redirects import free_port, have_wrk, serving, wrk, wrk_arguments
from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.link_rules.schema import RulesDocument
from shortlink.link_rules.validate import LinkContext, validated
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.storage import connect
from shortlink.storage.link_rules import replace_document

AGENTS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
)
LANGUAGES = ("en-US,en;q=0.9", "de-DE,de;q=0.9,en;q=0.8", "fr-FR,fr;q=0.9", "pt-BR,pt;q=0.9,en;q=0.7")
# Nine rules no bench visitor meets (each kind of condition), then the one every visitor meets.
RULES = {
    "rules": [
        {"conditions": [{"type": "device", "values": ["tablet"]}], "url": "https://example.com/tablet"},
        {"conditions": [{"type": "os", "values": ["ios", "android"]}], "url": "https://example.com/phones"},
        {"conditions": [{"type": "inApp", "values": ["any"]}], "url": "https://example.com/in-app"},
        {"conditions": [{"type": "query", "values": ["ref=newsletter"]}], "url": "https://example.com/news"},
        {"conditions": [{"type": "referrerHost", "values": ["t.co"]}], "url": "https://example.com/x"},
        {
            "conditions": [{"type": "time", "values": ["2001-01-01T00:00:00Z/2001-01-02T00:00:00Z"]}],
            "url": "https://example.com/2001",
        },
        {"conditions": [{"type": "language", "values": ["ja", "ko"]}], "url": "https://example.com/asia"},
        {"conditions": [{"type": "country", "values": ["JP", "KR"]}], "url": "https://example.com/asia-2"},
        {"conditions": [{"type": "os", "values": ["chromeos"]}], "url": "https://example.com/chromebook"},
        {"conditions": [{"type": "device", "values": ["desktop"]}], "url": "https://example.com/desktop"},
    ]
}


def rotation_script(directory: Path) -> Path:
    """A wrk script sending the agents and languages in turn, on any path."""
    path = directory / "mix.lua"
    agents = ", ".join(f'"{agent}"' for agent in AGENTS)
    languages = ", ".join(f'"{language}"' for language in LANGUAGES)
    path.write_text(
        f"local agents = {{{agents}}}\nlocal languages = {{{languages}}}\nlocal n = 0\n"
        "request = function()\n  n = n + 1\n"
        "  wrk.headers['User-Agent'] = agents[n % #agents + 1]\n"
        "  wrk.headers['Accept-Language'] = languages[n % #languages + 1]\n"
        "  return wrk.format(nil)\nend\n"
    )
    return path


def seed(location: str) -> tuple[str, str]:
    """(plain code, ruled code): two links to the same destination, the second with RULES."""
    conn = connect(location)
    try:
        accounts.create_key(conn, "bench@example.com")
        account_id = accounts.account_for(conn, "bench@example.com")["id"]
        hosts = Hosts("http://127.0.0.1:8000")
        codes = []
        for _ in range(2):
            link = service.create_link(
                conn,
                account_id,
                CreateLink(original_url="https://example.com/landing", title="Bench"),
                is_ours=hosts.is_ours,
                base=hosts.short_host,
                daily_limit=10,
                now=datetime.now(UTC),
                fetch_title=False,
            )
            codes.append(link.short_code)
        link_pk = conn.execute("SELECT id FROM links WHERE short_code = ?", (codes[1],)).fetchone()[0]
        document = validated(msgspec.convert(RULES, RulesDocument), LinkContext(codes[1], hosts.is_ours, frozenset()))
        replace_document(conn, account_id, link_pk, msgspec.json.encode(document).decode(), "2026-01-01T00:00:00.000Z")
    finally:
        conn.close()
    return codes[0], codes[1]


def main() -> int:
    args = wrk_arguments(__doc__.splitlines()[0]).parse_args()
    if not have_wrk():
        return 2
    work = Path(tempfile.mkdtemp(prefix="shortlink-bench-link-rules-"))
    location = str(work / "bench.db")
    plain, ruled = seed(location)
    script = rotation_script(work)
    port = free_port()
    config = work / "shortlink.toml"
    config.write_text(
        f'[server]\nport = {port}\naccess_log = false\n[storage]\npath = "{location}"\n'
        "[fetcher]\nenabled = false\n[limits]\nrequests_per_minute = 1000000\n"
    )
    base = f"http://127.0.0.1:{port}"
    paths = {"bare 302": "/bench/bare", "plain link": f"/l/{plain}", "10 rules": f"/l/{ruled}"}
    with serving(config, port, work / "server.log"):
        for path in paths.values():  # warm-up: caches filled, rules compiled
            wrk(base + path, 2, args.connections, script)
        rounds: list[dict[str, float]] = []
        for _ in range(args.rounds):
            rounds.append(
                {name: wrk(base + path, args.seconds, args.connections, script)["rps"] for name, path in paths.items()}
            )
        # Where the ruled link sent its visitors: the last rule, every time.
        status, location = probe(port, f"/l/{ruled}")
    for number, found in enumerate(rounds, start=1):
        print(f"round {number}: " + "   ".join(f"{name} {rps:>7.0f} req/s" for name, rps in found.items()))
    median = {name: statistics.median(found[name] for found in rounds) for name in paths}
    rules_ratio = median["10 rules"] / median["plain link"]
    hot_ratio = median["plain link"] / median["bare 302"]
    print(
        f"median: bare 302 {median['bare 302']:.0f}, plain link {median['plain link']:.0f}, "
        f"10 rules {median['10 rules']:.0f} req/s ({args.connections} connections, {args.rounds} rounds of "
        f"{args.seconds} s)"
    )
    print(f"10 rules / plain link: {rules_ratio:.1%} (target >= 95%)")
    print(f"plain link / bare 302: {hot_ratio:.1%} (target >= 85%)")
    print(f"10 rules / bare 302: {median['10 rules'] / median['bare 302']:.1%}")
    print(f"the ruled link answered {status} → {location}")
    time.sleep(0.1)
    return 0 if status == 302 and location == "https://example.com/desktop" else 1


def probe(port: int, path: str) -> tuple[int, str]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", path, headers={"User-Agent": AGENTS[0], "Accept-Language": LANGUAGES[1]})
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status, response.getheader("Location") or ""


if __name__ == "__main__":
    sys.exit(main())
