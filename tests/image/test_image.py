"""The Containerfile and compose.yaml users get, built and run with Debian's podman."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.image.common import api, copy_checkout, get, healthy
from tests.support import paths
from tests.support.helpers import wait_for
from throwaway.debian import cannot_run
from throwaway.live_server import free_port
from throwaway.podman import Podman, cache_dir

pytestmark = pytest.mark.image

TAG = "localhost/shortlink:latest"  # the name compose.yaml gives it
MAX_IMAGE_BYTES = 200 * 1000 * 1000


def build_context(into: Path) -> Path:
    """The checkout's files and wheels for the image's Python."""
    copy_checkout(into)
    # Wheels made with Debian's python3, the image's: the build then needs no package index.
    python = "/usr/bin/python3"
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    if version.stdout.strip() != "(3, 11)":
        cannot_run("the image tests", f"{python} is not Python 3.11, bookworm's ({version.stdout or version.stderr})")
    venv = cache_dir() / "wheel-venv"
    if not (venv / "bin" / "pip").exists():
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "pip"), "wheel", "--quiet", str(into), "-w", str(into / "dist" / "wheels")],
        check=True,
        capture_output=True,
    )
    return into


@pytest.fixture(scope="module")
def podman(tmp_path_factory) -> Podman:
    return Podman(tmp_path_factory.mktemp("podman"))


@pytest.fixture(scope="module")
def image(podman, tmp_path_factory) -> str:
    started = time.monotonic()
    podman.base_image()
    context = build_context(tmp_path_factory.mktemp("context"))
    built = time.monotonic()
    podman.build(context, TAG)
    done = time.monotonic()
    print(f"\nbase image ready in {built - started:.1f} s; shortlink image built in {done - built:.1f} s")
    return TAG


class Container:
    def __init__(self, podman: Podman, name: str, volume: str, *extra: str) -> None:
        self.podman, self.name, self.port = podman, name, free_port()
        podman.run("rm", "-f", name, check=False)
        podman.run(
            "run",
            "-d",
            "--name",
            name,
            "-p",
            f"127.0.0.1:{self.port}:8000",
            "-v",
            f"{volume}:/data",
            *extra,
            "-e",
            f"SHORTLINK_LINKS_SHORT_HOST=http://127.0.0.1:{self.port}",
            TAG,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        wait_for(lambda: healthy(self.base) or self.exited(), 60, f"{name} to answer /healthz")
        assert healthy(self.base), podman.run("logs", name, check=False).stderr[-2000:]

    def exited(self) -> bool:
        state = self.podman.run("inspect", "--format", "{{.State.Running}}", self.name, check=False)
        return state.stdout.strip() == "false"

    def exec(self, *args: str) -> str:
        return self.podman.run("exec", self.name, *args).stdout

    def remove(self) -> None:
        self.podman.run("rm", "-f", "-t", "10", self.name)


def make_key(container: Container) -> str:
    return json.loads(container.exec("shortlink", "key", "create", "--email", "ops@example.com", "--json"))["key"]


def test_the_image_is_under_200_mb(podman, image):
    size = podman.size(image)
    print(f"\nimage size: {size / 1e6:.1f} MB")
    assert size < MAX_IMAGE_BYTES


def test_a_container_runs_as_a_user_answers_healthz_and_keeps_links_in_its_volume(podman, image):
    volume = "shortlink-test-data"
    podman.run("volume", "rm", "-f", volume, check=False)
    first = Container(podman, "shortlink-test-a", volume)
    try:
        assert first.exec("id", "-u").strip() != "0"
        assert podman.run("healthcheck", "run", first.name).returncode == 0
        key = make_key(first)
        link = api(first.base, key, "POST", "/api/v1/links", {"originalUrl": "https://example.com/kept"})["data"]
        status, headers, _ = get(f"{first.base}/l/{link['shortCode']}")
        assert status in (301, 302, 307) and headers["location"] == "https://example.com/kept"
        assert get(first.base + "/api/v1/schema/openapi.json")[0] == 200
        assert "secret.key" in first.exec("ls", "/data")
    finally:
        first.remove()
    second = Container(podman, "shortlink-test-b", volume)
    try:
        again = api(second.base, key, "GET", f"/api/v1/links/{link['id']}")["data"]
        assert again["originalUrl"] == "https://example.com/kept"
        assert get(f"{second.base}/l/{link['shortCode']}")[1]["location"] == "https://example.com/kept"
    finally:
        second.remove()
        podman.run("volume", "rm", "-f", volume, check=False)


def test_a_database_url_from_a_secret_file_is_used(podman, image, tmp_path):
    secret = tmp_path / "database-url"
    secret.write_text("sqlite:////data/from-secret.db\n")
    secret.chmod(0o644)
    volume = "shortlink-test-secret"
    podman.run("volume", "rm", "-f", volume, check=False)
    container = Container(
        podman,
        "shortlink-test-secret",
        volume,
        "-v",
        f"{secret}:/run/secrets/database-url:ro,Z",
        "-e",
        "SHORTLINK_STORAGE_URL_FILE=/run/secrets/database-url",
    )
    try:
        make_key(container)
        assert "from-secret.db" in container.exec("ls", "/data")
        assert "shortlink.db" not in container.exec("ls", "/data").split()
    finally:
        container.remove()
        podman.run("volume", "rm", "-f", volume, check=False)


def test_compose_serves_a_link_within_60_s_and_keeps_it_over_down_and_up(podman, image, tmp_path):
    project = tmp_path / "compose"
    project.mkdir()
    shutil.copy(paths.REPO / "compose.yaml", project / "compose.yaml")
    port = free_port()
    env = {"SHORTLINK_PORT": str(port), "SHORTLINK_LINKS_SHORT_HOST": f"http://127.0.0.1:{port}"}
    base = f"http://127.0.0.1:{port}"
    name = f"shortlinktest{port}"
    compose = ("-p", name, "-f", str(project / "compose.yaml"))
    try:
        started = time.monotonic()
        podman.compose(*compose, "up", "-d", "--no-build", "shortlink", cwd=project, env=env)
        wait_for(lambda: healthy(base), 60, "compose's shortlink to answer /healthz")
        container = f"{name}_shortlink_1"
        key = json.loads(
            podman.run("exec", container, "shortlink", "key", "create", "--email", "c@example.com", "--json").stdout
        )["key"]
        link = api(base, key, "POST", "/api/v1/links", {"originalUrl": "https://example.com/compose"})["data"]
        assert get(f"{base}/l/{link['shortCode']}")[1]["location"] == "https://example.com/compose"
        first_link = time.monotonic() - started
        print(f"\ncompose up to the first link served: {first_link:.1f} s")
        assert first_link < 60
        podman.compose(*compose, "down", cwd=project, env=env)
        podman.compose(*compose, "up", "-d", "--no-build", "shortlink", cwd=project, env=env)
        wait_for(lambda: healthy(base), 60, "compose's shortlink to answer /healthz again")
        assert get(f"{base}/l/{link['shortCode']}")[1]["location"] == "https://example.com/compose"
    finally:
        subprocess.run(
            ["podman-compose", *compose, "down", "-v"],
            cwd=project,
            env={**podman.env, **env},
            capture_output=True,
            timeout=300,
        )
