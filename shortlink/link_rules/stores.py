"""The Amazon stores table a `rewrite` with `"table": "amazon"` uses: the visitor's country →
the store that sells there. Countries without a store of their own get the store Amazon itself
sends them to (Austria and Switzerland → amazon.de); any other country keeps the destination.
Owners extend or override it with their own `hosts` map."""

from __future__ import annotations

AMAZON_STORES = {
    "US": "amazon.com",
    "CA": "amazon.ca",
    "MX": "amazon.com.mx",
    "BR": "amazon.com.br",
    "GB": "amazon.co.uk",
    "IE": "amazon.co.uk",
    "DE": "amazon.de",
    "AT": "amazon.de",
    "CH": "amazon.de",
    "FR": "amazon.fr",
    "BE": "amazon.com.be",
    "NL": "amazon.nl",
    "IT": "amazon.it",
    "ES": "amazon.es",
    "PL": "amazon.pl",
    "SE": "amazon.se",
    "TR": "amazon.com.tr",
    "AE": "amazon.ae",
    "SA": "amazon.sa",
    "EG": "amazon.eg",
    "IN": "amazon.in",
    "JP": "amazon.co.jp",
    "SG": "amazon.sg",
    "AU": "amazon.com.au",
    "ZA": "amazon.co.za",
}
# Every store's host: a destination on one of these (with or without "www.") is an Amazon store.
AMAZON_HOSTS = frozenset(AMAZON_STORES.values())

TABLES = {"amazon": (AMAZON_STORES, AMAZON_HOSTS)}
