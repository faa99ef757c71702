"""Hostile and malformed import files: every parser reads in time proportional to its input,
a malformed row is a reported row and a malformed file one clear line (never a traceback);
where each row of a dump is; the clicks a row leaves out; the operator's import is not held to
the daily link limit; a big generic file is read a record at a time."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from shortlink.imports import PARSERS, yourls
from shortlink.imports.rows import FileError
from tests.cli.test_import import EMAIL, FIXTURES, import_json
from tests.conftest import run_cli

# (source, the unit repeated): the shapes that made a backtracking pattern go quadratic, and
# the like for every other parser (quotes, escapes, brackets, separators, tag colours).
HOSTILE = [
    ("yourls", b"INSERT INTO yourls_url ("),
    ("yourls", b"INSERT INTO yourls_url (\n"),
    ("yourls", b"INSERT INTO `yourls_url` VALUES ('a','"),
    ("yourls", b"INSERT INTO yourls_url VALUES ('\\'''"),
    ("yourls", b"INSERT INTO yourls_url (a,b,c,d,e,f) VALUES ("),
    ("csv", b"url,tags\nhttps://example.com/,a#ff8800a#"),
    ("csv", b'{"url": "https://example.com/", "x": [[["'),
    ("bitly", b'"Long URL,Bitly,'),
    ("shlink", b'{"shortUrls": [{"longUrl": "'),
    ("kutt", b"[[[[[[[[[[[[[[[["),
    ("fdl", b"https://x.page.link/?link=https://example.com/&utm_source=a&"),
]
# After a complete statement the dump's CREATE TABLE: its body was matched lazily to "\n)",
# from every "CREATE TABLE" of the file to its end.
VALID_INSERT = b"INSERT INTO yourls_url VALUES ('abc','https://example.com/','t','2023-01-01 00:00:00','1',0);\n"
HOSTILE.append(("yourls", b"CREATE TABLE a ("))


def parse_seconds(source: str, data: bytes) -> float:
    """The parse's CPU time, the least of three: what other processes on a loaded machine do
    counts in neither."""
    return min(cpu_seconds(lambda: PARSERS[source](data)) for _ in range(3))


def cpu_seconds(parse) -> float:
    started = time.process_time()
    try:
        parse()
    except FileError:
        pass  # refused with one clear error: what matters here is how long it took
    return time.process_time() - started


@pytest.mark.parametrize(("source", "unit"), HOSTILE)
def test_every_parser_reads_hostile_input_in_linear_time(source, unit):
    prefix = VALID_INSERT if unit.startswith(b"CREATE") else b""
    small, large = (parse_seconds(source, prefix + unit * times) for times in (8000, 16000))
    # 8,000 repetitions of "INSERT INTO yourls_url (" took 29 s; twice the input, about twice the time.
    assert small < 2 and large < 2, (small, large)
    assert large < 4 * small + 0.2, (small, large)


def test_a_hostile_dump_read_from_a_file_is_linear_too(tmp_path):
    """`shortlink import yourls` reads a dump a statement at a time (yourls.stream)."""
    timings = []
    for times in (8000, 16000):
        dump = tmp_path / f"hostile-{times}.sql"
        dump.write_bytes(VALID_INSERT + b"INSERT INTO yourls_url (" * times + b"\n" + b"CREATE TABLE a (" * times)
        started = time.process_time()
        rows, history = yourls.stream(dump)
        assert [row.code for row in rows] == ["abc"] and list(history()) == []  # type: ignore[union-attr]
        timings.append(time.process_time() - started)
    assert max(timings) < 2 and timings[1] < 4 * timings[0] + 0.2, timings


MALFORMED_ROWS = [
    # (source, a file of a malformed row and a good one, the bad row's line, what its reason says)
    (
        "fdl",
        "short link,long link\nhttps://x.page.link/a,http://[bad\n"
        "https://x.page.link/good1,https://x.page.link/?link=https://example.com/good\n",
        2,
        "Invalid IPv6 URL",
    ),
    (
        "csv",
        "url,code,created_at\nhttps://example.com/a,twenty,12345678901234567890\nhttps://example.com/good,good1,\n",
        2,
        "created_at",
    ),
    (
        "csv",
        '{"url": "https://example.com/a", "x": ' + "[" * 5000 + "]" * 5000 + '}\n{"url": "https://example.com/good"}\n',
        1,
        "nested too deep",
    ),
    (
        "bitly",
        '[{"long_url": 12345, "link": "https://bit.ly/abc"},'
        ' {"long_url": "https://example.com/good", "link": "bit.ly/good1"}]',
        1,
        "long_url must be text (got a number)",
    ),
    (
        "shlink",
        '[{"longUrl": "https://example.com/a", "shortCode": "abc", "tags": "x"},'
        ' {"longUrl": "https://example.com/good", "shortCode": "good1"}]',
        1,
        "tags must be a list of text (got text)",
    ),
    (
        "kutt",
        '[{"target": "https://example.com/a", "address": 42},'
        ' {"target": "https://example.com/good", "address": "good1"}]',
        1,
        "address must be text (got a number)",
    ),
]
MALFORMED_FILES = [
    ("kutt", "[" * 5000 + "]" * 5000, "nested too deep"),
    ("bitly", '{"links": ' + "[" * 5000 + "]" * 5000 + "}", "nested too deep"),
    ("fdl", '{"shortLink": "https://x.page.link/a"}', "no long link column"),
    ("shlink", '[{"longUrl": "https://example.com/a"}', "not JSON"),
]


@pytest.mark.parametrize(("source", "content", "line", "reason"), MALFORMED_ROWS)
def test_a_malformed_row_is_reported_and_the_good_ones_import(db_path, tmp_path, source, content, line, reason):
    path = tmp_path / "file"
    path.write_text(content)
    code, report = import_json(str(db_path), source, path)
    assert code == 1, report  # a row was refused
    refused = [row for row in report["rows"] if row["action"] == "error"]
    assert [row["line"] for row in refused] == [line] and reason in refused[0]["reason"], report
    assert report["created"] == 1, report
    text = run_cli("import", source, str(path), "--email", EMAIL, "--db", str(db_path), "--dry-run", check=False)
    assert text.returncode == 1 and "Traceback" not in text.stderr and f"line {line}: error" in text.stdout


@pytest.mark.parametrize(("source", "content", "reason"), MALFORMED_FILES)
def test_a_malformed_file_is_one_clear_line(db_path, tmp_path, source, content, reason):
    path = tmp_path / "file"
    path.write_text(content)
    result = run_cli("import", source, str(path), "--email", EMAIL, "--db", str(db_path), check=False)
    assert result.returncode == 1 and result.stdout == "", result
    assert result.stderr.count("\n") == 1 and reason in result.stderr and "Traceback" not in result.stderr


def test_each_row_of_a_dump_says_where_it_is(db_path, tmp_path):
    # mysqldump writes a table's rows as one INSERT line: each row is told apart by its place.
    _code, report = import_json(str(db_path), "yourls", FIXTURES / "yourls.sql", "--dry-run")
    assert [(row["line"], row["row"]) for row in report["rows"]] == [(37, number) for number in range(1, 7)]
    text = run_cli(
        "import",
        "yourls",
        str(FIXTURES / "yourls.sql"),
        "--email",
        EMAIL,
        "--db",
        str(db_path),
        "--dry-run",
        check=False,
    )
    assert "line 37, row 5 of its INSERT: error bad" in text.stdout
    # phpMyAdmin writes a row a line: each row's line is its own.
    dump = tmp_path / "phpmyadmin.sql"
    dump.write_text(
        "INSERT INTO `yourls_url` (`keyword`, `url`, `title`, `timestamp`, `ip`, `clicks`) VALUES\n"
        "('one', 'https://example.com/1', 'One', '2023-09-01 10:00:00', '127.0.0.1', 0),\n"
        "('two', 'javascript:alert(1)', 'Two', '2023-09-01 10:00:00', '127.0.0.1', 0),\n"
        "('three', 'https://example.com/3', 'Three', '2023-09-01 10:00:00', '127.0.0.1', 0);\n"
    )
    result = run_cli(
        "import", "yourls", str(dump), "--email", EMAIL, "--db", str(db_path), "--dry-run", "--json", check=False
    )
    rows = json.loads(result.stdout)["rows"]
    assert [(row["line"], row["row"], row["action"]) for row in rows] == [
        (2, 1, "create"),
        (3, 2, "error"),
        (4, 3, "create"),
    ]
    assert [(row.line, row.row) for row in yourls.parse(dump.read_bytes())] == [(2, 1), (3, 2), (4, 3)]


def test_an_unchanged_row_says_how_many_clicks_it_left_out(db_path):
    for source, file, line in (("shlink", "shlink.json", 1), ("yourls", "yourls.sql", 37)):
        import_json(str(db_path), source, FIXTURES / file)
        _code, again = import_json(str(db_path), source, FIXTURES / file)
        first = again["rows"][0]
        assert first["action"] == "unchanged" and first["line"] == line
        left = first["clicks_left_out"]
        assert left >= 3, first
        assert first["reason"].endswith(
            f"{left} clicks not imported: the link is already here and keeps its own history"
        ), first
        assert again["visits"] == 0


def test_the_operators_import_is_not_held_to_the_daily_link_limit(db_path, tmp_path, monkeypatch):
    monkeypatch.setenv("SHORTLINK_LIMITS_LINKS_PER_DAY", "5")
    path = tmp_path / "many.csv"
    path.write_text("url\n" + "".join(f"https://example.com/{n}\n" for n in range(12)))
    code, report = import_json(str(db_path), "csv", path)
    assert code == 0 and report["created"] == 12
    assert "not held to the daily link limit" in " ".join(run_cli("--help").stdout.split())


@pytest.mark.slow
def test_a_big_generic_file_is_read_a_record_at_a_time(tmp_path):
    """A 50 MB CSV: the import's memory grows by about the rows it keeps, not by several copies
    of the file (the whole file, its text, every record as a dict: 200 MB once peaked at 2.3 GB)."""
    path = tmp_path / "big.csv"
    row = "https://example.com/landing/{n}?utm_source=news&page={page},,Title {n},{description}\n"
    page, description = "p" * 150, "d" * 480
    with path.open("w") as file:
        file.write("url,code,title,description\n")
        size, n = 0, 0
        while size < 50 * 2**20:
            line = row.format(n=n, page=page, description=description)
            file.write(line)
            size, n = size + len(line), n + 1
    measure = (
        "import resource, sys\n"
        "import shortlink.application.imports, shortlink.imports.generic\n"
        "from shortlink import cli\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "code = cli.main(sys.argv[1:])\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(code, before, after, file=sys.stderr)\n"
    )
    command = ["import", "csv", str(path), "--email", EMAIL, "--db", str(tmp_path / "db.sqlite"), "--dry-run"]
    result = subprocess.run(
        [sys.executable, "-c", measure, *command], capture_output=True, text=True, timeout=120, check=False
    )
    code, before, after = (int(word) for word in result.stderr.split()[-3:])
    assert code == 0, result.stderr
    grown_mb = (after - before) / 1024  # ru_maxrss is in KiB on Linux
    # What stays is the rows themselves (their text and a few empty lists each): the file read
    # whole, its text and every record as a dict beside them came to ten times the file.
    assert grown_mb < 3 * size / 2**20, (grown_mb, size)
