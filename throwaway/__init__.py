"""Real servers that tests and benchmarks start for one run and throw away after it: a
`shortlink serve` process, PostgreSQL and Redis from Debian's packages (installed when
missing), on free ports of 127.0.0.1. Shared by `tests/` and `bench/`, which never import
each other."""
