"""Podman for the image tests (tests/image/): Debian's podman, runc and podman-compose, a
debian:bookworm-slim base made with mmdebstrap (no container registry needed), and the project's
own Containerfile built on it.

Nothing in /etc changes: podman reads a containers.conf and a storage.conf the caller's directory
holds (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF). Images and the base's tarball are kept in a
cache directory outside the repository, so a second run rebuilds only what changed.
"""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
import time
from pathlib import Path

from throwaway.debian import cannot_run, find_or_install

BASE_IMAGE = "docker.io/library/debian:bookworm-slim"
# The base is made again after a week, so that it carries Debian's security updates.
BASE_MAX_AGE_SECONDS = 7 * 24 * 3600
# As debian:bookworm-slim is made: minbase, merged /usr, no manuals, documentation or translations,
# and apt set to keep neither downloaded packages nor its binary caches.
_SLIM_APT = (
    'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb '
    '/var/cache/apt/*.bin || true"; };\n'
    'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb '
    '/var/cache/apt/*.bin || true"; };\nDir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n'
)
MMDEBSTRAP = [
    "--variant=minbase",
    "--format=tar",
    "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
    "--dpkgopt=path-exclude=/usr/share/info/*",
    '--aptopt=Acquire::Languages "none"',
    f"--customize-hook=printf '%s' '{_SLIM_APT}' > \"$1/etc/apt/apt.conf.d/docker-clean\"",
    '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin',
    "bookworm",
]
SOURCES = [
    "deb http://deb.debian.org/debian bookworm main",
    "deb http://deb.debian.org/debian bookworm-updates main",
    "deb http://deb.debian.org/debian-security bookworm-security main",
]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = Path(base) / "shortlink-image-tests"
    path.mkdir(parents=True, exist_ok=True)
    return path


class Podman:
    """podman with its configuration in `directory` and its images in the cache directory."""

    def __init__(self, directory: Path) -> None:
        for command, package in (
            ("podman", "podman"),
            ("runc", "runc"),
            ("mmdebstrap", "mmdebstrap"),
            ("podman-compose", "podman-compose"),
            ("newuidmap", "uidmap"),
            ("slirp4netns", "slirp4netns"),
        ):
            find_or_install(command, package, "the image tests")
        directory.mkdir(parents=True, exist_ok=True)
        storage = cache_dir() / "storage"
        # runc, and this process's own limits: podman's defaults ask for more than a sandbox allows.
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[0], 4096)  # runc is refused this machine's own
        (directory / "containers.conf").write_text(
            "[containers]\n"
            f'default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n'
            "[engine]\n"
            'runtime = "runc"\n'
            'cgroup_manager = "cgroupfs"\n'
            'events_logger = "file"\n'
        )
        (directory / "storage.conf").write_text(
            f'[storage]\ndriver = "overlay"\ngraphroot = "{storage}/root"\nrunroot = "{directory}/run"\n'
        )
        self.env = {
            **os.environ,
            "CONTAINERS_CONF": str(directory / "containers.conf"),
            "CONTAINERS_STORAGE_CONF": str(directory / "storage.conf"),
        }

    def run(self, *args: str, check: bool = True, timeout: float = 900, **kwargs) -> subprocess.CompletedProcess:
        result = subprocess.run(
            ["podman", *args], env=self.env, capture_output=True, text=True, timeout=timeout, **kwargs
        )
        if check and result.returncode != 0:
            raise AssertionError(f"podman {' '.join(args)} failed ({result.returncode}): {result.stderr[-2000:]}")
        return result

    def compose(self, *args: str, cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
        result = subprocess.run(
            ["podman-compose", *args],
            cwd=cwd,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if result.returncode != 0:
            raise AssertionError(
                f"podman-compose {' '.join(args)} failed: {result.stdout[-1500:]}{result.stderr[-1500:]}"
            )
        return result

    def base_image(self) -> None:
        """debian:bookworm-slim under its own name, made here from Debian's archive."""
        stamp = hashlib.sha256(repr((MMDEBSTRAP, SOURCES)).encode()).hexdigest()[:16]
        tarball = cache_dir() / f"debian-bookworm-slim-{stamp}.tar"
        fresh = tarball.exists() and time.time() - tarball.stat().st_mtime < BASE_MAX_AGE_SECONDS
        if not fresh:
            partial = tarball.with_suffix(".partial")
            result = subprocess.run(
                ["mmdebstrap", *MMDEBSTRAP, str(partial), *SOURCES], capture_output=True, text=True, timeout=1200
            )
            if result.returncode != 0:
                cannot_run("the image tests", f"mmdebstrap could not make the base image: {result.stderr[-500:]}")
            partial.replace(tarball)
        imported = cache_dir() / "base-image-imported"
        present = self.run("image", "exists", BASE_IMAGE, check=False).returncode == 0
        if not (fresh and present and imported.exists() and imported.read_text() == tarball.name):
            self.run("import", "--change", 'CMD ["bash"]', str(tarball), BASE_IMAGE)
            imported.write_text(tarball.name)

    def build(self, context: Path, tag: str) -> None:
        """The project's Containerfile, as users build it (the HEALTHCHECK kept: docker format)."""
        self.run("build", "--format", "docker", "--network=host", "-t", tag, "-f", "Containerfile", str(context))

    def size(self, tag: str) -> int:
        return int(self.run("image", "inspect", "--format", "{{.Size}}", tag).stdout)
