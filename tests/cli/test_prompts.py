"""Commands that ask a question, when nobody can answer: a password piped without
--password-stdin, standard input at its end, Ctrl-D at a prompt. One clear line and a failing
exit status, never a traceback."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

from shortlink.accounts import service as accounts
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.times import utcnow
from tests.conftest import run_cli
from tests.support.dashboard import PASSWORD
from tests.support.terminal import on_terminal

EMAIL = "script@example.com"
SCRIPTED = "--password-stdin"


def typed_at_prompts(args: list[str], answers: list[tuple[bytes, bytes]]) -> tuple[int, str]:
    """`shortlink *args` on a pseudo-terminal, typing each answer once its prompt is shown:
    getpass flushes what was typed before it asks."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "shortlink", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
        start_new_session=True,  # no /dev/tty of this test's: getpass reads the pseudo-terminal
    )
    os.close(follower)
    output = b""
    pending = list(answers)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # reading what it prints as it comes: not a wait
        ready, _, _ = select.select([leader], [], [], 1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the process ended and closed the terminal
                break
            if not chunk:
                break
            output += chunk
            if pending and output.endswith(pending[0][0]):
                os.write(leader, pending.pop(0)[1])
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(timeout=300), output.decode(errors="replace")


def one_clear_line(stderr: str) -> str:
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr
    return stderr


def test_a_piped_password_without_password_stdin_says_how_to_pipe_it(storage, conn):
    db = ("--db", storage)
    # `echo PASSWORD | shortlink account password --email …`: a new interpreter, as a shell runs it.
    piped = subprocess.run(
        [sys.executable, "-m", "shortlink", "account", "password", "--email", EMAIL, *db],
        input=PASSWORD + "\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert piped.returncode == 1
    assert SCRIPTED in one_clear_line(piped.stderr) and "not a terminal" in piped.stderr
    # Standard input already at its end (run_cli's is /dev/null): the same line.
    ended = run_cli("account", "password", "--email", EMAIL, *db, check=False)
    assert ended.returncode == 1 and SCRIPTED in one_clear_line(ended.stderr)
    assert conn.execute("SELECT count(*) FROM accounts WHERE email = ?", (EMAIL,)).fetchone()[0] == 0
    # The line's way works.
    scripted = subprocess.run(
        [sys.executable, "-m", "shortlink", "account", "password", "--email", EMAIL, SCRIPTED, *db],
        input=PASSWORD + "\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert scripted.returncode == 0, scripted.stderr
    assert conn.execute("SELECT count(*) FROM accounts WHERE email = ?", (EMAIL,)).fetchone()[0] == 1


def test_the_end_of_input_at_a_prompt_is_one_line(storage, conn):
    db = ("--db", storage)
    # Ctrl-D at the second password prompt.
    code, output = typed_at_prompts(
        ["account", "password", "--email", EMAIL, *db],
        [(b"New password: ", b"a good password\n"), (b"Again: ", b"\x04")],
    )
    assert code == 1 and "Traceback" not in output and "end of input" in output and SCRIPTED in output
    assert conn.execute("SELECT count(*) FROM accounts WHERE email = ?", (EMAIL,)).fetchone()[0] == 0
    # Ctrl-D at a delete's question: not deleted, and --yes named.
    account_id = accounts.ensure_account(conn, EMAIL)["id"]
    link_id = service.create_link(
        conn,
        account_id,
        CreateLink(original_url="https://example.com/"),
        is_ours=lambda host: False,
        base="http://127.0.0.1:8000",
        daily_limit=100,
        now=utcnow(),
        fetch_title=False,
        source="API",
    ).id
    code, output = on_terminal("links", "delete", link_id, *db, answer=b"\x04")
    assert code == 1 and "Traceback" not in output and "end of input" in output and "--yes" in output
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 1
