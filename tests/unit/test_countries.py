"""Visitors' countries: the bundled table (real look-ups) and an operator's MMDB file."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from shortlink.storage.labels import UNKNOWN_COUNTRY
from shortlink.visits.countries import CountryTableError, open_table
from shortlink.visits.enrich import country_of
from tests.support.countries import write_country_file


@pytest.mark.parametrize(
    ("ip", "country"),
    [
        ("8.8.8.8", "US"),  # Google Public DNS
        ("2001:4860:4860::8888", "US"),  # its IPv6 address
        ("1.0.16.1", "JP"),
        ("81.2.69.142", "GB"),
        ("193.0.6.139", "NL"),  # RIPE NCC's own
        ("2a01:4f8::1", "DE"),  # Hetzner
        ("41.0.0.1", "ZA"),
    ],
)
def test_the_bundled_table_knows_well_known_addresses(ip, country):
    assert open_table().country(ip) == country


@pytest.mark.parametrize("ip", ["127.0.0.1", "10.1.2.3", "::1", "2001:db8::1", "not an address", ""])
def test_private_documentation_and_malformed_addresses_have_no_country(ip):
    assert country_of(ip, "", open_table()) == UNKNOWN_COUNTRY


def test_the_bundled_table_says_when_it_was_built():
    table = open_table()
    assert table.source.startswith("iptocc ")
    assert table.built is not None and date(2026, 10, 1) <= table.built <= date.today()


def test_a_trusted_country_header_wins_over_the_table():
    assert country_of("8.8.8.8", " de ", open_table()) == "DE"
    assert country_of("8.8.8.8", "XX", open_table()) == "US"  # a proxy's "unknown" is looked up


@pytest.mark.parametrize("geoip2_style", [True, False])
def test_an_operators_file_replaces_the_bundled_table(tmp_path, geoip2_style):
    built = datetime(2026, 11, 20, 6, tzinfo=UTC)
    path = write_country_file(
        tmp_path / "countries.mmdb",
        {"8.8.8.0/24": "FR", "2001:4860::/32": "SE"},
        geoip2_style=geoip2_style,
        built=built,
    )
    table = open_table(str(path))
    assert (table.country("8.8.8.8"), table.country("2001:4860:4860::8888")) == ("FR", "SE")
    assert table.country("1.0.16.1") is None and table.country("not an address") is None
    assert table.built == date(2026, 11, 20) and str(path) in table.source


def test_a_missing_or_foreign_file_is_refused_naming_the_key(tmp_path):
    with pytest.raises(CountryTableError, match=r"\[geoip\] path .*absent\.mmdb"):
        open_table(str(tmp_path / "absent.mmdb"))
    not_mmdb = tmp_path / "countries.csv"
    not_mmdb.write_text("8.8.8.0,8.8.8.255,US\n")
    with pytest.raises(CountryTableError, match=r"countries\.csv"):
        open_table(str(not_mmdb))
