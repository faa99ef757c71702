"""The image tests take minutes and build with podman or pip: `make test-image` runs them, `make test` leaves
them out (a run that does not name this folder skips collecting it)."""

from pathlib import Path

HERE = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path, config):
    named = [Path(arg.split("::")[0]).resolve() for arg in config.args]
    if not any(path == HERE or HERE in path.parents for path in named):
        return True
    return None
