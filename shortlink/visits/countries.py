"""The country of an IP address, from an offline table: the one `iptocc` bundles, or a MaxMind
DB file the operator names with [geoip] path.

iptocc's wheels embed the five regional registries' delegation files of the day they were
built, and it is released about monthly, so `pip install -U iptocc` refreshes the table. A
country MMDB (DB-IP's free "IP to Country Lite", GeoLite2-Country, the ip-location-db
builds) can be fresher, or place addresses where they are used rather than where they were
registered. Lookups run in the click writer, never on the redirect.
"""

from __future__ import annotations

import importlib.metadata
import json
from datetime import UTC, date, datetime
from functools import cache
from typing import Any, Protocol

import iptocc
import maxminddb

from shortlink.config import ConfigError


class CountryTable(Protocol):
    source: str  # what the table is, for `shortlink doctor`
    built: date | None  # when its data was taken, when known

    def country(self, ip: str) -> str | None:
        """The ISO 3166-1 alpha-2 code, or None (unassigned, private or malformed address)."""
        ...


class BundledTable:
    """iptocc's registry data."""

    def __init__(self) -> None:
        self.source = f"iptocc {_iptocc_version()} (regional registries' delegations)"
        self.built = _iptocc_build_date()

    def country(self, ip: str) -> str | None:
        return iptocc.country_code(ip)


class CountryFile:
    """An MMDB file: GeoIP2-style records ({"country": {"iso_code": …}}) or ip-location-db's
    ({"country_code": …})."""

    def __init__(self, path: str) -> None:
        self._reader = maxminddb.open_database(path)  # memory-mapped: cheap to open, shared by processes
        metadata = self._reader.metadata()
        self.source = f"{path} ({metadata.database_type})"
        self.built: date | None = datetime.fromtimestamp(metadata.build_epoch, UTC).date()

    def country(self, ip: str) -> str | None:
        try:
            record = self._reader.get(ip)
        except ValueError:  # not an address
            return None
        return _code_of(record) if isinstance(record, dict) else None


def _code_of(record: dict[str, Any]) -> str | None:
    country = record.get("country")
    code = country.get("iso_code") if isinstance(country, dict) else record.get("country_code")
    return code if isinstance(code, str) else None


@cache
def _iptocc_version() -> str:
    return importlib.metadata.version("iptocc")


@cache  # the installed wheel's, read once a process (its metadata is some files to search)
def _iptocc_build_date() -> date | None:
    """When the installed wheel was built, which is when its data was taken: its software bill
    of materials is stamped then (iptocc has no other record of its data's date)."""
    distribution = importlib.metadata.distribution("iptocc")
    for file in distribution.files or ():
        if file.name.endswith(".cyclonedx.json"):
            stamp = json.loads(file.read_text()).get("metadata", {}).get("timestamp", "")
            return datetime.fromisoformat(stamp[:19]).date() if stamp else None
    return None


class CountryTableError(ConfigError):
    """The [geoip] file is missing or is no MaxMind DB: start-up stops in one line."""


def open_table(path: str = "") -> CountryTable:
    """The operator's MMDB file when `path` is set, else the bundled table."""
    if not path:
        return BundledTable()
    try:
        return CountryFile(path)
    except (OSError, ValueError, maxminddb.InvalidDatabaseError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise CountryTableError(f"invalid configuration: [geoip] path {path}: {reason}") from exc
