"""Country MMDB files written for tests, in the two record styles [geoip] path reads."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from mmdb_writer import MMDBWriter
from netaddr import IPSet


class _DatedWriter(MMDBWriter):
    """Stamps the file with a chosen build time (the writer stamps the present)."""

    def __init__(self, built: datetime | None, **options: Any):
        super().__init__(**options)
        self.built = built

    def _build_meta(self) -> dict[str, Any]:
        meta = super()._build_meta()
        if self.built is not None:
            meta["build_epoch"] = int(self.built.timestamp())
        return meta


def write_country_file(
    path: Path, countries: dict[str, str], *, geoip2_style: bool = True, built: datetime | None = None
) -> Path:
    """An MMDB mapping each network ("8.8.8.0/24", "2001:db8::/32") to a country code, as
    GeoIP2-style records ({"country": {"iso_code": …}}, DB-IP's and GeoLite2's) or
    ip-location-db's ({"country_code": …})."""
    writer = _DatedWriter(built, ip_version=6, ipv4_compatible=True, database_type="Test-Country")
    for network, code in countries.items():
        record = {"country": {"iso_code": code}} if geoip2_style else {"country_code": code}
        writer.insert_network(IPSet([network]), record)
    writer.to_db_file(str(path))
    return path
