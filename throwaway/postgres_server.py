"""A throwaway PostgreSQL for tests: Debian's server binaries (initdb, pg_ctl) on a free local
port in a temporary directory, installed with apt-get when missing (see tests/debian.py).

PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` system
user that Debian's package creates, and initdb and the server run as that user (runuser).
Durability is off (fsync, synchronous_commit): a test cluster never outlives its run, and
what the tests kill is our server processes, not PostgreSQL.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

from throwaway.debian import cannot_run, find_or_install
from throwaway.live_server import free_port

WHAT = "PostgreSQL tests"
SUPERUSER = "shortlink"
TEMPLATE = "shortlink_template"


def server_binaries() -> Path:
    """/usr/lib/postgresql/<version>/bin of the newest installed server."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda path: int(path.split("/")[4]))
    if not found:
        find_or_install("pg_ctlcluster", "postgresql", WHAT)
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda path: int(path.split("/")[4]))
    if not found:
        cannot_run(WHAT, "the postgresql package is installed but no initdb is under /usr/lib/postgresql")
    return Path(found[-1]).parent


class PostgresServer:
    def __init__(self):
        self.binaries = server_binaries()
        self.port = free_port()
        # Not under pytest's tmp_path: its parents are private to root, and the server
        # runs as another user.
        self.directory = Path(tempfile.mkdtemp(prefix="shortlink-pg-"))
        self.data = self.directory / "data"
        self.log = self.directory / "server.log"
        self.as_user: list[str] = []
        self.admin_url = self.url("postgres")
        self._databases = 0

    def url(self, database: str) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *command: str) -> subprocess.CompletedProcess:
        return subprocess.run([*self.as_user, *command], capture_output=True, text=True, timeout=120)

    def start(self, timeout: float = 60) -> PostgresServer:
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                cannot_run(WHAT, "running as root needs the postgres system user (Debian's postgresql package)")
            os.chown(self.directory, owner.pw_uid, owner.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        initdb = self._run(
            str(self.binaries / "initdb"),
            *("-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"),
        )
        if initdb.returncode != 0:
            cannot_run(WHAT, f"initdb failed: {initdb.stderr.strip()[-500:]}")
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        started = self._run(
            str(self.binaries / "pg_ctl"), *("-D", str(self.data), "-l", str(self.log), "-o", options, "-w"), "start"
        )
        if started.returncode != 0:
            log = self.log.read_text(errors="replace")[-500:] if self.log.exists() else ""
            cannot_run(WHAT, f"pg_ctl start failed: {started.stderr.strip()[-300:]} {log}")
        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg.connect(self.admin_url, connect_timeout=2).close()
                return self
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    cannot_run(WHAT, f"the server does not answer: {exc}")
                time.sleep(0.1)

    def pid(self) -> int:
        """The postmaster's process id (its backends are its children)."""
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def admin(self, *statements: str) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)

    def create_template(self) -> None:
        """A database migrated once, that every test's database is copied from."""
        from shortlink.storage import connect

        self.admin(f"CREATE DATABASE {TEMPLATE}")
        connect(self.url(TEMPLATE)).close()

    def new_database(self, template: str = TEMPLATE) -> str:
        """A fresh, migrated database of its own: a copy of `template` (fast), nobody connected to it."""
        self._databases += 1
        name = f"test_{self._databases}"
        self.admin(f"CREATE DATABASE {name} TEMPLATE {template} STRATEGY FILE_COPY")
        return self.url(name)

    def empty_database(self) -> str:
        """A database without our schema (what `shortlink migrate --to` expects)."""
        self._databases += 1
        name = f"empty_{self._databases}"
        self.admin(f"CREATE DATABASE {name}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        self.admin(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")

    def stop(self) -> None:
        self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)
