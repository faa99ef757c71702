"""Webhooks and the redirect path: the one-hot-link redirect ratio to a bare 302 with an endpoint
subscribed to link.clicked, side by side with none; then 1,000 human clicks a second with that
endpoint, on a fresh database each: all on one link, then spread over --paced-links links;
whether every click's event is delivered as it comes, without the outbox growing. (A link's
events go out one after another, so one link's rate is bound by the receiver's round trip.)
With the ratio rounds, the CPU per redirect at full load of the serving process alone and of
the delivering process, with and without the endpoint (less moved by a loaded machine).
Last, the delivering process alone (no server): --standalone-events waiting click events on one
link and on --paced-links links, its deliveries a second and CPU per delivery.

Run: .venv/bin/python -m bench.webhooks [--rounds 3] [--seconds 5] [--rate 1000] [--paced-seconds 20]
[--paced-links 50] [--standalone-events 10000] [--paced-only] [--standalone-only].
Needs wrk. The receiver is a separate process on 127.0.0.1 answering 204 at once (so the
installation runs with [fetcher] allow_private_addresses for it).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from bench.redirects import (
    clicks,
    free_port,
    have_wrk,
    measure,
    paced_script,
    serving,
    wrk,
    wrk_arguments,
)
from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.config import load_config
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.storage import clicks as click_store
from shortlink.storage import connect
from shortlink.storage import links as link_store
from shortlink.storage import webhooks as webhook_store
from shortlink.webhooks import endpoints
from shortlink.webhooks.events import CreateWebhook
from shortlink.webhooks.process import MODULE, READY, DeliveryProcess

PRIVATE = {"SHORTLINK_FETCHER_ALLOW_PRIVATE_ADDRESSES": "true"}
CATCH_UP_SECONDS = 120
PROBE_SECONDS = 3


def drain(location: str) -> None:
    """Wait until the delivering process has sent every waiting event."""
    deadline = time.monotonic() + CATCH_UP_SECONDS
    while sum(outbox_sizes(location)) and time.monotonic() < deadline:
        time.sleep(0.2)


async def receive(port: int) -> None:
    """A minimal HTTP/1.1 receiver: 204 to every POST (counted), the count to GET /count."""
    received = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal received
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                if head.startswith(b"GET /count"):
                    body = str(received).encode()
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                else:
                    received += 1
                    writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


def received(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/count", timeout=5) as response:
        return int(response.read())


def seed(location: str, receiver_port: int | None, links: int = 1) -> list[str]:
    """An account with `links` links (the first is the hot link), and when given, an endpoint
    subscribed to their clicks. Returns their short codes."""
    conn = connect(location)
    accounts.create_key(conn, "bench@example.com")
    account_id = accounts.account_for(conn, "bench@example.com")["id"]
    hosts = Hosts("http://127.0.0.1:8000")
    codes = [
        service.create_link(
            conn,
            account_id,
            CreateLink(original_url=f"https://example.com/landing/{number}", title="Bench"),
            is_ours=hosts.is_ours,
            base=hosts.short_host,
            daily_limit=links,
            now=datetime.now(UTC),
            fetch_title=False,
        ).short_code
        for number in range(links)
    ]
    if receiver_port is not None:
        body = CreateWebhook(url=f"http://127.0.0.1:{receiver_port}/hooks", events=["link.clicked"])
        endpoints.create_endpoint(conn, account_id, body, now=datetime.now(UTC), allow_private=True)
    conn.close()
    return codes


def outbox_sizes(location: str) -> tuple[int, int]:
    """(events waiting to be fanned out, deliveries not yet made)."""
    conn = connect(location)
    try:
        return webhook_store.waiting_event_count(conn), webhook_store.pending_delivery_count(conn)
    finally:
        conn.close()


@contextmanager
def webhook_server(work: Path, location: str, name: str) -> Iterator[tuple[subprocess.Popen, int]]:
    """`bench.server` on `location` (one process, as `shortlink serve`), once serving and, when
    the database has an endpoint, once its delivering process runs; stopped afterwards."""
    port = free_port()
    config = work / f"{name}.toml"
    config.write_text(
        f'[server]\nport = {port}\naccess_log = false\n[storage]\npath = "{location}"\n'
        "[fetcher]\nenabled = false\nallow_private_addresses = true\n[limits]\nrequests_per_minute = 1000000\n"
    )
    log_file = work / f"server-{name}.log"
    with serving(config, port, log_file) as server:
        conn = connect(location)
        hooked = webhook_store.any_endpoint(conn)
        conn.close()
        deadline = time.monotonic() + CATCH_UP_SECONDS
        while hooked and READY not in log_file.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        yield server, port


def delivering_child(parent: int) -> int | None:
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == parent and MODULE.encode() in (entry / "cmdline").read_bytes():
                return int(entry.name)
        except OSError:
            continue
    return None


def cpu_run(args, work: Path, location: str, code: str, name: str, label: str, receiver: int) -> dict:
    """Full-load redirects for rounds × seconds: CPU of the serving process alone, of the
    delivering process and of the receiver, per redirect answered (what load on the machine
    changes least)."""
    with webhook_server(work, location, name) as (server, port):
        url = f"http://127.0.0.1:{port}/l/{code}"
        wrk(url, 2, args.connections)  # warm-up
        child = delivering_child(server.pid)
        serving, delivering, receiving = cpu_of(server.pid), cpu_of(child), cpu_of(receiver)
        run = wrk(url, args.rounds * args.seconds, args.connections)
        serving, delivering = cpu_of(server.pid) - serving, cpu_of(child) - delivering
        receiving = cpu_of(receiver) - receiving
    return {
        "name": label,
        "rps": run["rps"],
        "serving": serving / run["requests"],
        "delivering": delivering / run["requests"],
        "receiving": receiving / run["requests"],
    }


def paced_run(args, work: Path, location: str, codes: list[str], receiver_port: int) -> dict:
    """`args.rate` human clicks a second for `args.paced_seconds` on a fresh database, spread over
    `codes` in turn, the outbox and the receiver's count sampled every second."""
    samples: list[tuple[float, int, int, int]] = []
    with webhook_server(work, location, "paced") as (_server, port):
        done = threading.Event()

        def sample() -> None:
            started = time.monotonic()
            while not done.wait(1.0):
                waiting, pending = outbox_sizes(location)
                samples.append((time.monotonic() - started, waiting, pending, received(receiver_port)))

        sampler = threading.Thread(target=sample)
        # wrk paces by a delay per connection, and each answer's latency comes on top: a short
        # run first measures that latency, and the paced run's delay is shortened by it.
        connections = 64
        target = f"http://127.0.0.1:{port}/l/{codes[0]}"
        probe = wrk(target, PROBE_SECONDS, connections, paced_script(work, args.rate, connections))
        latency_ms = max(1000.0 * connections / probe["rps"] - 1000.0 * connections / args.rate, 0.0)
        time.sleep(1.0)  # the probe's last clicks written, then their events sent
        drain(location)
        script = paced_script(work, args.rate, connections, latency_ms)
        if len(codes) > 1:  # each request the next link's code
            paths = ", ".join(f'"/l/{code}"' for code in codes)
            with script.open("a") as lua:
                lua.write(f"paths = {{{paths}}}\nturn = 0\n")
                lua.write("function request() turn = turn + 1 return wrk.format(nil, paths[turn % #paths + 1]) end\n")
        before = received(receiver_port)
        base_clicks = clicks(location)
        sampler.start()
        run = wrk(target, args.paced_seconds, connections, script)
        done.set()
        sampler.join()
        at_end = received(receiver_port) - before
        ended = time.monotonic()
        left = clicks(location) - base_clicks - at_end
        while left > 0 and time.monotonic() < ended + CATCH_UP_SECONDS:
            time.sleep(0.2)
            left = clicks(location) - base_clicks - (received(receiver_port) - before)
        caught_up = time.monotonic() - ended
    return {
        "wrk": run,
        "samples": samples,
        "before": before,
        "delivered_during": at_end,
        "caught_up": caught_up,
        "left": left,
        "links": len(codes),
    }


def report_paced(args, paced: dict) -> None:
    run, samples = paced["wrk"], paced["samples"]
    print(
        f"paced, clicks on {paced['links']} link(s): {run['rps']:.0f} human clicks/s for {args.paced_seconds} s "
        f"(p99 {run['p99']:.2f} ms), {paced['delivered_during']} events delivered during the run "
        f"({paced['delivered_during'] / args.paced_seconds:.0f}/s), "
        + (
            f"all delivered {paced['caught_up']:.1f} s after it ended"
            if paced["left"] <= 0
            else f"{paced['left']} of its clicks still undelivered {CATCH_UP_SECONDS} s after it ended"
        )
    )
    counts = [paced["before"]] + [sample[3] for sample in samples]
    per_second = [later - earlier for earlier, later in itertools.pairwise(counts)]
    outbox = [sample[1] + sample[2] for sample in samples]
    third = max(len(outbox) // 3, 1)
    print(
        f"  delivered each second: median {statistics.median(per_second) if per_second else 0:.0f}, "
        f"min {min(per_second, default=0)}, max {max(per_second, default=0)}; outbox (events waiting + "
        f"deliveries pending) each second: {outbox}; mean of its first third {statistics.mean(outbox[:third]):.0f}, "
        f"of its last third {statistics.mean(outbox[-third:]):.0f}"
    )


def cpu_of(pid: int | None) -> float:
    """CPU seconds (user + system) used by a running process so far."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def standalone_run(work: Path, receiver_port: int, events: int, links: int) -> dict:
    """The delivering process alone on a fresh database holding `events` waiting click events
    spread over `links` links: deliveries a second from its first to its last, and its CPU."""
    location = str(work / f"standalone-{links}.db")
    codes = seed(location, receiver_port, links)
    conn = connect(location)
    link_pks = [row["id"] for row in (link_store.link_by_code(conn, code) for code in codes) if row is not None]
    account_id = accounts.account_for(conn, "bench@example.com")["id"]
    now_ms = int(time.time() * 1000)
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    for start in range(0, events, 5000):
        batch = [
            click_store.StoredClick(
                link_pks[number % len(link_pks)], account_id, now_ms, day, "desktop", "Chrome", "Windows", "DE",
                "news.example.com", "", "bench", number, 0,
            )
            for number in range(start, min(events, start + 5000))
        ]  # fmt: skip
        click_store.write_batch(conn, click_store.encode_batch(batch), with_events=True)
    conn.close()
    config = work / f"standalone-{links}.toml"
    config.write_text(f'[storage]\npath = "{location}"\n[fetcher]\nallow_private_addresses = true\n')
    delivery = DeliveryProcess(load_config(config, environ={}))
    before = received(receiver_port)
    delivery.start()
    try:
        deadline = time.monotonic() + CATCH_UP_SECONDS
        first = last = 0.0
        cpu_at_first = 0.0
        while (count := received(receiver_port) - before) < events and time.monotonic() < deadline:
            if count and not first:
                first, cpu_at_first = time.monotonic(), cpu_of(delivery.pid)
            time.sleep(0.05)
        last = time.monotonic()
        cpu = cpu_of(delivery.pid) - cpu_at_first
    finally:
        delivery.stop()
    return {"events": events, "links": links, "delivered": count, "seconds": last - first, "cpu": cpu}


def report_standalone(run: dict) -> None:
    rate = run["delivered"] / run["seconds"] if run["seconds"] else 0.0
    print(
        f"delivering process alone, {run['events']} waiting click events on {run['links']} link(s): "
        f"{run['delivered']} delivered at {rate:.0f}/s, {run['cpu'] / max(run['delivered'], 1) * 1e6:.0f} µs "
        "of its CPU per delivery"
    )


def main() -> int:
    parser = wrk_arguments(__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="human clicks a second in the paced phase")
    parser.add_argument("--paced-seconds", type=int, default=20)
    parser.add_argument(
        "--paced-links", type=int, default=50, help="the second paced run spreads its clicks over this many links"
    )
    parser.add_argument("--standalone-events", type=int, default=10000)
    parser.add_argument("--paced-only", action="store_true", help="skip the redirect ratio rounds")
    parser.add_argument("--standalone-only", action="store_true", help="only the delivering process alone")
    args = parser.parse_args()
    args.server, args.access_log, args.backend = "uvicorn", False, "sqlite"
    if not have_wrk():
        return 2
    work = Path(tempfile.mkdtemp(prefix="shortlink-bench-webhooks-"))
    receiver_port = free_port()
    receiver = subprocess.Popen([sys.executable, "-m", "bench.webhooks", "--receive", str(receiver_port)])
    os.environ.update(PRIVATE)  # the servers measure() starts deliver to the receiver on 127.0.0.1
    try:
        time.sleep(0.5)
        plain, hooked = str(work / "plain.db"), str(work / "hooked.db")
        results = {}
        cpu_runs: list[dict] = []
        if not args.paced_only and not args.standalone_only:
            plain_code, hooked_code = seed(plain, None)[0], seed(hooked, receiver_port)[0]
            for name, location, code in (
                ("no endpoint", plain, plain_code),
                ("endpoint on link.clicked", hooked, hooked_code),
            ):
                # Each bare 302 round waits for the previous round's events to be sent: else the
                # bare server would be measured while the delivering process catches up.
                rounds, _paced, exact = measure(
                    args, work, location, code, 1, "", {"receiver": receiver.pid}, partial(drain, location)
                )
                results[name] = (rounds, exact)
            for name, port in (("no endpoint", None), ("endpoint on link.clicked", receiver_port)):
                location = str(work / f"cpu-{len(cpu_runs)}.db")
                code = seed(location, port)[0]
                cpu_runs.append(cpu_run(args, work, location, code, f"cpu-{len(cpu_runs)}", name, receiver.pid))
        paced_runs = []
        for links in () if args.standalone_only else (1, args.paced_links):
            location = str(work / f"paced-{links}.db")
            paced_runs.append(paced_run(args, work, location, seed(location, receiver_port, links), receiver_port))
        alone = [standalone_run(work, receiver_port, args.standalone_events, links) for links in (1, args.paced_links)]
    finally:
        receiver.terminate()
        receiver.wait()
    for name, (rounds, exact) in results.items():
        bare = statistics.median(bare["rps"] for bare, _ in rounds)
        redirect = statistics.median(redirect["rps"] for _, redirect in rounds)
        print(
            f"{name}: bare 302 {bare:.0f} req/s, /l/<code> + click {redirect:.0f} req/s, "
            f"ratio {redirect / bare:.1%} (target >= 85%); exact phase {exact}/2000 clicks recorded"
        )
    for run in cpu_runs:
        print(
            f"CPU per redirect at full load, {run['name']}: serving process {run['serving'] * 1e6:.0f} µs, "
            f"delivering process {run['delivering'] * 1e6:.0f} µs, the receiver {run['receiving'] * 1e6:.0f} µs"
            f" ({run['rps']:.0f} req/s)"
        )
    for paced in paced_runs:
        report_paced(args, paced)
    for run in alone:
        report_standalone(run)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--receive"]:
        asyncio.run(receive(int(sys.argv[2])))
    else:
        sys.exit(main())
