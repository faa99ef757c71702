"""The signing key: HMAC-SHA256(the key file, the database's own random secret).

It signs everything the server must later trust again: CSRF tokens, remembered link
passwords, deferred-link tokens, webhook endpoint secrets (through webhooks.secrets), and
the names of rate-limit buckets in Redis. Whoever holds only the database (a backup, a copied
file) cannot forge any of them, nor can whoever holds only the key file.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from shortlink.config import ConfigError, StorageConfig
from shortlink.storage import Connection, is_postgresql, sqlite_path
from shortlink.storage import accounts as account_store

FILE_NAME = "secret.key"
MIN_KEY_BYTES = 32
# The database's half of the signing key, under the setting name it was first stored with (it
# signed only cookies then): a stored name is data, and renaming it would take a migration for
# nothing.
STORED_SECRET_SETTING = "cookie_secret"


def key_file_of(storage: StorageConfig) -> Path | None:
    """`[storage] secret_file`, else `secret.key` beside the SQLite file; None for a
    PostgreSQL database without one (its processes may be on several machines, so no
    file can be made for them: the operator gives every one the same file)."""
    if storage.secret_file:
        return Path(storage.secret_file)
    if is_postgresql(storage.location):
        return None
    return Path(sqlite_path(storage.location)).parent / FILE_NAME


def load_signing_key(conn: Connection, storage: StorageConfig) -> bytes:
    """The signing key of the installation at `storage`, as every process makes it: the key file
    (made when missing) and the database's secret (made by the first process to ask)."""
    key_file = key_file_of(storage)
    file_key = None if key_file is None else read_or_create(key_file)
    stored = account_store.setting(conn, STORED_SECRET_SETTING, lambda: secrets.token_hex(32))
    return derive_signing_key(file_key, bytes.fromhex(stored))


def derive_signing_key(file_key: bytes | None, stored_secret: bytes) -> bytes:
    """The signing key from its two halves; the database's alone without a key file (PostgreSQL
    without `[storage] secret_file`)."""
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
