"""`shortlink doctor`: the report of the checks (doctor_checks.py), exit code 1 on a problem."""

from __future__ import annotations

import argparse
import json
import os

import msgspec

from shortlink.cli.common import Output, Unhealthy, command, storage_overrides


def register(commands) -> None:
    doctor = command(commands, "doctor", run_doctor, "check the configuration, database, data files and proxy settings")
    doctor.add_argument(
        "--via", metavar="URL", help="fetch the association files from this address, each host's name as Host"
    )


def run_doctor(args: argparse.Namespace) -> Output:
    from shortlink.cli.doctor_checks import diagnose

    report = diagnose(args.config, os.environ, via=args.via, **storage_overrides(args))
    lines = [f"configuration file: {report.config_file}"]
    width = max((len(setting.key) for setting in report.settings), default=0)
    lines += [f"  {s.key:<{width}}  {json.dumps(s.value)}  ({s.origin})" for s in report.settings]
    lines += [f"{name}: {json.dumps(value)}" for name, value in report.facts.items()]
    lines += [f"{f.severity.upper()} [{f.check}] {f.message} -> {f.fix}" for f in report.findings]
    problems = sum(finding.severity == "problem" for finding in report.findings)
    lines.append("healthy" if report.healthy else f"{problems} problem{'s' if problems > 1 else ''} found")
    result = msgspec.to_builtins(report) | {"healthy": report.healthy}
    if not report.healthy:
        raise Unhealthy(result, "\n".join(lines))
    return result, "\n".join(lines)
