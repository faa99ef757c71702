"""Domains an account connects itself: proved by a DNS TXT record, then served (docs/deployment.md)."""
