"""Accounts: API keys, subscriptions, custom domains, dashboard passwords and sessions."""
