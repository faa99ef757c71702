"""The key file: the half of the server's HMAC key that is not in the database.

CSRF tokens and remembered-password cookies are signed with HMAC-SHA256(key file,
the database's random `cookie_secret`): whoever holds only the database (a backup, a
copied file) cannot forge either, nor can whoever holds only the key file.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from shortlink.config import ConfigError, StorageConfig
from shortlink.storage import is_postgresql, sqlite_path

FILE_NAME = "secret.key"
MIN_KEY_BYTES = 32


def key_file_of(storage: StorageConfig) -> Path | None:
    """`[storage] secret_file`, else `secret.key` beside the SQLite file; None for a
    PostgreSQL database without one (its processes may be on several machines, so no
    file can be made for them: the operator gives every one the same file)."""
    if storage.secret_file:
        return Path(storage.secret_file)
    if is_postgresql(storage.location):
        return None
    return Path(sqlite_path(storage.location)).parent / FILE_NAME


def signing_key(file_key: bytes | None, stored_secret: bytes) -> bytes:
    """The HMAC key of CSRF tokens and password cookies."""
    if file_key is None:
        return stored_secret
    return hmac.new(file_key, stored_secret, hashlib.sha256).digest()


def read_or_create(path: Path) -> bytes:
    """The key in `path`, made (32 random bytes in hex, readable by its owner only) when there is
    none. Processes starting together all end up reading the one file that was linked
    into place first. A file that cannot be read or made stops start-up in one line."""
    try:
        return _read_or_create(path)
    except OSError as exc:
        raise ConfigError(f"invalid configuration: [storage] secret_file: {path}: {exc.strerror}") from None


def _read_or_create(path: Path) -> bytes:
    if not path.exists():
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            # Hex, as `openssl rand -hex 32` writes a key by hand: surrounding whitespace is
            # then never part of it.
            file.write(secrets.token_hex(MIN_KEY_BYTES).encode())
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:  # another process made it first: use theirs
            pass
        finally:
            os.unlink(temporary)
    key = path.read_bytes().strip()
    if len(key) < MIN_KEY_BYTES:
        raise ConfigError(
            f"invalid configuration: [storage] secret_file: {path} holds {len(key)} bytes; "
            f"a key needs at least {MIN_KEY_BYTES} (e.g. `openssl rand -hex 32 > {path}`)"
        )
    return key
