"""Webhooks: signed, durable, retried events for link changes and human clicks.

`events` (the API's and the bodies' Structs), `rules` (endpoint rules and the backoff
schedule, plain functions), `secrets` (endpoint secrets derived from the signing key,
signatures), `outbox` (writing events in the change's transaction, dispatching, settling
attempts), `send` (one HTTP delivery under the fetcher's address rules) and `deliverer`
(the task that delivers)."""
