"""`shortlink` commands as processes forked from a server that has imported shortlink already.

`python -m shortlink serve` spends about 2.5 s of CPU before it serves (imports, the visitor
classifier's tables), a CLI command about 0.4 s, and the suite starts some hundreds of them on
two cores. multiprocessing's fork server imports `throwaway.fork_preload` once per test worker;
each command is then a fork of it: a process of its own that runs `cli.main(args)` in its main
thread with its own environment, working directory, standard streams and exit status, as
`python -m shortlink` does after its start-up.

Daemonic: a command still running when its test worker ends is terminated with it. Such a
process may not start multiprocessing children, so `serve --workers N` (N > 1) is started the
ordinary way (throwaway.live_server).
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["throwaway.fork_preload"])


def _command(args: list[str], environ: dict[str, str], cwd: str, stdout: str, stderr: str) -> None:
    from shortlink import cli

    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)
    for stream, path in ((sys.stdout, stdout), (sys.stderr, stderr)):
        stream.flush()
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(target, stream.fileno())
        os.close(target)
    sys.argv = ["shortlink", *args]
    sys.exit(cli.main(args))


class ForkedProcess:
    """The parts of subprocess.Popen the tests use, for a forked command."""

    def __init__(self, args: list[str], env: dict[str, str] | None, stdout: Path | None, stderr: Path | None):
        self.args = args
        self._process = _CONTEXT.Process(
            target=_command,
            args=(
                args,
                dict(os.environ if env is None else env),
                os.getcwd(),
                str(stdout or os.devnull),
                str(stderr or os.devnull),
            ),
            daemon=True,
        )
        self._process.start()
        assert self._process.pid is not None
        self.pid: int = self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        self._process.is_alive()  # reads the exit status once the fork server has sent it
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self._process.exitcode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()


def start_forked(
    args: list[str], *, env: dict[str, str] | None = None, stdout: Path | None = None, stderr: Path | None = None
) -> ForkedProcess:
    """`shortlink *args` in a forked process; its output appended to the files given, or dropped."""
    return ForkedProcess(args, env, stdout, stderr)


def run(args: list[str], *, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    """`shortlink *args` to its end, its output captured, as subprocess.run(..., text=True) gives it."""
    with tempfile.TemporaryDirectory(prefix="shortlink-command-") as scratch:
        out, err = Path(scratch, "stdout"), Path(scratch, "stderr")
        out.touch()
        err.touch()
        process = start_forked(args, stdout=out, stderr=err)
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        result = subprocess.CompletedProcess(
            [sys.executable, "-m", "shortlink", *args], code, out.read_text(), err.read_text()
        )
    if check:
        result.check_returncode()
    return result
