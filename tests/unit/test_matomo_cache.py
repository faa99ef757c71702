"""Matomo's rule files are parsed once per release and user: the parse is kept in the cache
directory, read back by the next start, and a damaged or unwritable cache is no error."""

from __future__ import annotations

import importlib.resources

import msgspec
import yaml

from shortlink.visits import matomo

FEEDS = "regexes/upstream/client/feed_readers.yml"


def parsed_yaml() -> list:
    text = (importlib.resources.files("device_detector") / FEEDS).read_text("utf-8")
    return yaml.load(text, yaml.CSafeLoader)


def test_the_parse_is_kept_and_read_back_by_the_next_start(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert matomo.rules(FEEDS, list) == parsed_yaml()
    (kept,) = (tmp_path / "shortlink").iterdir()
    assert kept.stat().st_mode & 0o777 == 0o600 and (tmp_path / "shortlink").stat().st_mode & 0o777 == 0o700
    assert msgspec.msgpack.decode(kept.read_bytes()) == parsed_yaml()
    # What the next start gets is what the cache holds (a stand-in here, to tell them apart).
    kept.write_bytes(msgspec.msgpack.encode([{"regex": "from the cache"}]))
    assert matomo.rules(FEEDS, list) == [{"regex": "from the cache"}]


def test_a_damaged_cache_is_parsed_again_and_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    matomo.rules(FEEDS, list)
    (kept,) = (tmp_path / "shortlink").iterdir()
    kept.write_bytes(b"\xc1 not msgpack")
    assert matomo.rules(FEEDS, list) == parsed_yaml()
    assert msgspec.msgpack.decode(kept.read_bytes()) == parsed_yaml()
    assert [path.name for path in (tmp_path / "shortlink").iterdir()] == [kept.name]  # nothing left aside


def test_without_a_writable_cache_directory_every_start_parses_and_xdg_is_followed(tmp_path, monkeypatch):
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(not_a_directory))
    assert matomo.rules(FEEDS, list) == parsed_yaml()
    # A relative XDG_CACHE_HOME is ignored (the XDG specification): the home's .cache it is.
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert matomo.rules(FEEDS, list) == parsed_yaml()
    assert len(list((tmp_path / "home" / ".cache" / "shortlink").iterdir())) == 1
