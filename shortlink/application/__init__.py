"""The application layer: the operations every door calls.

The JSON API, the visitor route, the dashboard, MCP and the CLI are transports; each
turns its input into a call here and the result into its own output. Rules live in
plain functions (`shortlink.links`, `shortlink.accounts`, `shortlink.analytics`,
`shortlink.visits`); SQL lives in `shortlink.storage`. What these classes add is the
coordination every door must get exactly the same: which connection an operation
runs on (writer or reader), slow hashing off the event loop, cache invalidation,
the title fetcher's wake-up, the limits.
"""
