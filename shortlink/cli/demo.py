"""`shortlink demo seed`: demo links with realistic clicks (demo_data.py)."""

from __future__ import annotations

import argparse
import asyncio

import msgspec

from shortlink.cli.common import Output, command, command_group, config_of
from shortlink.cli.progress import stop_on_interrupt
from shortlink.stopping import Interrupted


def register(commands) -> None:
    demo = command_group(commands, "demo", "demo data")
    seed = command(demo, "seed", run_seed, "create demo links and record realistic clicks on them")
    seed.add_argument("--email", required=True, help="account (created with Pro if new)")
    seed.add_argument("--links", type=int, required=True)
    seed.add_argument("--clicks", type=int, required=True)
    seed.add_argument("--days", type=int, default=30, help="spread the clicks over this many days (default 30)")


def run_seed(args: argparse.Namespace) -> Output:
    # Imported by the one command that uses it: it loads the click recorder and its tables.
    from shortlink.cli.demo_data import seed

    with stop_on_interrupt() as stop:
        result = asyncio.run(seed(config_of(args), args.email, args.links, args.clicks, args.days, stop=stop))
    text = (
        f"seeded {result.links} links and {result.clicks} clicks "
        f"({result.bots} from bots) for {args.email} over {args.days} days"
    )
    if result.interrupted:
        raise Interrupted(
            f"interrupted: {text}, of {args.links} links and {args.clicks} clicks asked for; those are stored"
        )
    return msgspec.structs.asdict(result) | {"email": args.email, "days": args.days}, text
