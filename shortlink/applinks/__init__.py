"""Deep links into an account's own apps: the app records and their rules, the
association documents Apple and Google read, their validator, and deferred deep links."""
