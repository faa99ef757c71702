"""Fixtures: a real temporary SQLite file and the real app over it."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from shortlink.accounts import service as accounts
from shortlink.config import Config, load_config
from shortlink.storage import connect
from shortlink.web.asgi import bind, create_app
from throwaway import prewarmed
from throwaway.postgres_server import PostgresServer
from throwaway.redis_server import RedisServer

SHORT_HOST = "https://sho.rt"


BACKENDS = ("sqlite", "postgresql")


# Fixtures that start a real PostgreSQL, Redis or web server from Debian's packages: tests using
# them are marked `system`; tests driving Chromium (the `browser` fixture) are marked `browser`.
SYSTEM_FIXTURES = {"postgres_server", "redis_server", "nginx", "caddy"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Markers from what a test uses, so that `make test-fast` (-m "not browser and not system")
    can leave out every test that needs Chromium or a server from Debian's packages; then the
    modules in the order that keeps every worker busy to the end."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "browser" in fixtures:
            item.add_marker(pytest.mark.browser)
        callspec = getattr(item, "callspec", None)
        on_postgresql = callspec is not None and callspec.params.get("backend") == "postgresql"
        if fixtures & SYSTEM_FIXTURES or on_postgresql:
            item.add_marker(pytest.mark.system)
    # Heaviest modules first: xdist hands out whole modules in this order, so a long module
    # started last would keep one worker busy while the other has finished.
    # Rough costs in fifths of a second (most tests): a browser step a second or two, a slow
    # test some seconds, or as many as its marker says (`pytest.mark.slow(seconds=90)`).
    weight: dict[str, int] = {}
    for item in items:
        module = item.nodeid.split("::")[0]
        slow = item.get_closest_marker("slow")
        browser = item.get_closest_marker("browser")
        cost = 5 * slow.kwargs.get("seconds", 8) if slow else 8 if browser else 1
        if browser and module not in weight:  # starting Chromium and a server, once a module
            cost += 40
        weight[module] = weight.get(module, 0) + cost
    items.sort(key=lambda item: -weight[item.nodeid.split("::")[0]])


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests marked both_backends run once on SQLite and once on PostgreSQL, but those
    also marked sqlite_only: what they observe only SQLite shows (its statement trace)."""
    definition = metafunc.definition
    if (
        "backend" in metafunc.fixturenames
        and definition.get_closest_marker("both_backends")
        and not definition.get_closest_marker("sqlite_only")
    ):
        metafunc.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """The storage backend of the test: SQLite unless the test is marked both_backends."""
    return getattr(request, "param", "sqlite")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One throwaway PostgreSQL server for the whole session (installed when missing)."""
    server = PostgresServer().start()
    try:
        server.create_template()
        yield server
    finally:
        server.stop()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "shortlink.db"


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file at the latest schema, made once per worker: each test's database starts
    as a copy of it (migrating a new file costs some 50 ms, copying one a millisecond)."""
    path = tmp_path_factory.mktemp("migrated") / "shortlink.db"
    connect(path).close()
    return path


@pytest.fixture
def storage(backend: str, db_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """Where the test's database is: the SQLite file, or a fresh PostgreSQL database (each
    already at the latest schema)."""
    if backend == "sqlite":
        shutil.copyfile(request.getfixturevalue("migrated_sqlite"), db_path)
        yield str(db_path)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.new_database()
    yield url
    server.drop_database(url)


def storage_settings(location: str) -> dict[str, str]:
    """The configuration overrides that point at `location` (a path or a URL)."""
    return {"storage_url": location} if "://" in location else {"storage_path": location}


@pytest.fixture
def make_config(storage: str, tmp_path: Path) -> Callable[..., Config]:
    """Config for a test: overrides as section_key=value, e.g. limits_links_per_day=3."""

    def make(**overrides) -> Config:
        settings = {**storage_settings(storage), "links_short_host": SHORT_HOST, "fetcher_enabled": False, **overrides}
        empty = tmp_path / "shortlink.toml"
        empty.touch()
        return load_config(empty, environ={}, **settings)

    return make


@pytest.fixture
def config(make_config) -> Config:
    return make_config()


# Building an app costs a fifth of a second, most of a typical test's time: each worker keeps
# the apps it built and binds the next test's configuration and database to a free one.
FREE_APPS: list[Litestar] = []


@pytest.fixture
def make_client(make_config) -> Iterator[Callable[..., TestClient]]:
    """Start the real app (lifespan included) with config overrides."""
    clients: list[TestClient] = []

    def make(**overrides) -> TestClient:
        config = make_config(**overrides)
        if FREE_APPS:
            app = FREE_APPS.pop()
            bind(app, config)
        else:
            app = create_app(config)
        client = TestClient(app=app)
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in reversed(clients):
        client.__exit__(None, None, None)
        FREE_APPS.append(client.app)


@pytest.fixture
def client(make_client) -> TestClient:
    return make_client()


@pytest.fixture
def conn(storage: str):
    """A second connection to the same database, as the CLI would have."""
    connection = connect(storage)
    yield connection
    connection.close()


@pytest.fixture
def new_key(conn) -> Callable[..., str]:
    """Create an account (Pro active) and an API key; returns the key."""

    def make(email: str = "owner@example.com", name: str | None = None) -> str:
        return accounts.create_key(conn, email, name).key

    return make


@pytest.fixture
def api_key(new_key) -> str:
    return new_key()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def auth(api_key) -> dict[str, str]:
    return bearer(api_key)


def run_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """The real `shortlink` command in a separate process (forked from one that has imported
    shortlink already: throwaway.prewarmed)."""
    return prewarmed.run(list(args), check=check)


@pytest.fixture
def redis_server(tmp_path) -> Iterator[RedisServer]:
    """A throwaway redis-server of its own for one test (installed when missing)."""
    server = RedisServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()
