"""`python -m shortlink.delivering`: the delivering process `shortlink serve` starts and keeps
running (webhooks.process), wired by wiring.Delivering. A module of its own, outside the webhooks
package: that package is built by the wiring and never imports it."""

from __future__ import annotations

from shortlink.config import Config
from shortlink.webhooks.process import Delivering, main


def build(config: Config) -> Delivering:
    # Imported once niced (process.main): the app's modules are most of the start-up's CPU.
    from shortlink.wiring import Delivering as WiredDelivering

    return WiredDelivering(config)


if __name__ == "__main__":
    main(build)
