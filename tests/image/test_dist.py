"""`make dist`: the wheel and dist/shortlink.pyz, the one file to copy, run by a Python that has
nothing else (a clean virtual environment of Debian's python3) from a directory of its own."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from shortlink.cli.parser import build_parser
from tests.image.common import api, copy_checkout, get, healthy
from tests.support import paths
from tests.support.helpers import wait_for
from tests.support.receiver import running_receiver
from throwaway.debian import cannot_run, find_or_install
from throwaway.live_server import free_port

pytestmark = pytest.mark.image

PYTHON = "/usr/bin/python3"  # Debian's, as `make wheels` and `make dist` use


def platform_of(python: str) -> tuple[str, tuple[int, int]]:
    code = "import sys, sysconfig; print(sysconfig.get_platform(), *sys.version_info[:2])"
    platform, major, minor = subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.split()
    return platform, (int(major), int(minor))


@dataclass
class Built:
    checkout: Path
    output: str  # what `make dist` printed


@dataclass
class Pyz:
    python: Path  # a clean virtual environment's: no shortlink, no dependency
    path: Path  # the pyz, copied out of the checkout that built it
    env: dict[str, str]
    cwd: Path

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.python), str(self.path), *args],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    find_or_install("make", "make", "the dist test")
    if platform_of(PYTHON)[1] < (3, 11):
        cannot_run("the dist test", f"{PYTHON} is older than Python 3.11")
    checkout = copy_checkout(tmp_path_factory.mktemp("checkout"))
    result = subprocess.run(["make", "dist"], cwd=checkout, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, f"make dist failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return Built(checkout, result.stdout)


@pytest.fixture(scope="module")
def pyz(built, tmp_path_factory) -> Pyz:
    home = tmp_path_factory.mktemp("elsewhere")
    copied = home / "shortlink.pyz"
    shutil.copy2(built.checkout / "dist" / "shortlink.pyz", copied)
    venv = home / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    for module in ("shortlink", "msgspec", "litestar"):
        found = subprocess.run([str(python), "-c", f"import {module}"], cwd=home, capture_output=True)
        assert found.returncode != 0, f"the clean environment can import {module}"
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env |= {
        "SHIV_ROOT": str(home / "shiv"),  # the first run unpacks here
        "XDG_CACHE_HOME": str(home / "cache"),
        "PATH": f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}",
    }
    (home / "run").mkdir()
    return Pyz(python, copied, env, home / "run")


@dataclass
class Server:
    base: str
    key: str
    db: Path


@pytest.fixture(scope="module")
def server(pyz, tmp_path_factory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("data") / "shortlink.db"
    created = pyz.run("key", "create", "--email", "ops@example.com", "--json", "--db", str(db))
    assert created.returncode == 0, created.stderr[-3000:]
    key = json.loads(created.stdout)["key"]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **pyz.env,
        "SHORTLINK_LINKS_SHORT_HOST": base,
        "SHORTLINK_FETCHER_ENABLED": "false",  # no title fetches: every request stays on this machine
        "SHORTLINK_FETCHER_ALLOW_PRIVATE_ADDRESSES": "true",  # the webhook receiver is on 127.0.0.1
    }
    log = (db.parent / "server.log").open("w+")
    process = subprocess.Popen(
        [str(pyz.python), str(pyz.path), "serve", "--host", "127.0.0.1", "--port", str(port), "--db", str(db)],
        cwd=pyz.cwd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for(lambda: healthy(base) or process.poll() is not None, 120, "the pyz's server to answer /healthz")
        log.seek(0)
        assert process.poll() is None, log.read()[-3000:]
        yield Server(base, key, db)
    finally:
        process.terminate()
        process.wait(timeout=60)
        log.close()


def test_make_dist_writes_the_wheel_and_says_where_the_pyz_runs(built):
    wheels = list((built.checkout / "dist").glob("shortlink-*.whl"))
    assert [wheel.name for wheel in wheels] == ["shortlink-1.0.0-py3-none-any.whl"]
    platform, (major, minor) = platform_of(PYTHON)
    assert f"runs only on {platform} with Python {major}.{minor}, as it was built" in built.output


def test_the_pyz_lists_every_command(pyz):
    result = pyz.run("--help")
    assert result.returncode == 0, result.stderr[-3000:]
    (commands,) = [action for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction)]
    listed = {line.split()[0] for line in result.stdout.splitlines() if line.startswith("    ") and line.split()}
    assert set(commands.choices) <= listed, set(commands.choices) - listed


def test_a_link_made_through_the_api_of_the_pyz_redirects(server):
    link = api(server.base, server.key, "POST", "/api/v1/links", {"originalUrl": "https://example.com/pyz"})["data"]
    assert link["shortUrl"] == f"{server.base}/l/{link['shortCode']}"
    status, headers, _ = get(link["shortUrl"])
    assert status in (301, 302, 307) and headers["location"] == "https://example.com/pyz"


def test_the_pyz_finds_its_package_data(pyz, server):
    # Templates: the dashboard's sign-in page and a password-protected link's visitor page.
    status, _, body = get(server.base + "/login")
    assert status == 200 and b"Sign in" in body
    made = {"originalUrl": "https://example.com/locked", "password": "open sesame"}
    locked = api(server.base, server.key, "POST", "/api/v1/links", made)["data"]
    status, _, body = get(locked["shortUrl"])
    assert status == 200 and b'type="password"' in body
    # Static files, as the checkout has them.
    status, _, body = get(server.base + "/static/dashboard/dashboard.css")
    assert status == 200 and body == (paths.REPO / "shortlink/dashboard/static/dashboard.css").read_bytes()
    # Migrations (the database the key was made in) and the dependencies' data files.
    doctor = pyz.run("doctor", "--db", str(server.db), "--json")
    facts = json.loads(doctor.stdout)["facts"]
    assert facts["crawler-user-agents"]["present"] and facts["device-detector"]["present"], facts
    assert facts["geoip"]["table"].startswith("iptocc"), facts
    assert not [finding for finding in json.loads(doctor.stdout)["findings"] if finding["check"] == "database"]


def test_webhooks_go_out_from_the_process_the_pyz_starts(server):
    with running_receiver() as receiver:
        endpoint = {"url": receiver.url, "events": ["link.created"]}
        receiver.secrets.append(api(server.base, server.key, "POST", "/api/v1/webhooks", endpoint)["data"]["secret"])
        link = api(server.base, server.key, "POST", "/api/v1/links", {"originalUrl": "https://example.com/hook"})
        wait_for(lambda: receiver.verified_events(), 60, "the link.created delivery")
        (event,) = receiver.verified_events()
        assert event["type"] == "link.created" and event["data"]["id"] == link["data"]["id"]


def test_on_a_python_it_was_not_built_for_the_pyz_says_so_in_one_line(pyz, tmp_path):
    env = {**pyz.env, "SHIV_ROOT": str(tmp_path / "shiv")}
    first = subprocess.run([str(pyz.python), str(pyz.path), "--help"], cwd=pyz.cwd, env=env, capture_output=True)
    assert first.returncode == 0, first.stderr[-3000:]
    # The unpacked preamble as a build on another Python minor writes it: only its suffix differs.
    (preamble,) = (tmp_path / "shiv").glob("shortlink.pyz_*/site-packages/bin/pyz-preamble.py")
    text = preamble.read_text()
    built = re.search(r"!= '(\.cpython-\d+-[^']+)'", text)
    assert built, text
    preamble.write_text(text.replace(built[1], built[1].replace("cpython-", "cpython-9")))
    result = subprocess.run(
        [str(pyz.python), str(pyz.path), "key", "list", "--email", "a@example.com"],
        cwd=pyz.cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    platform, (major, minor) = platform_of(PYTHON)
    here = f"{platform} with Python {major}.{minor}"
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"shortlink.pyz runs only on {here}, as it was built, not on {here}: build it with make dist on a machine like"
        " this one"
    ]
