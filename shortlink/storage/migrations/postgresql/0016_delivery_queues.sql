-- Twin of SQLite's 0016: each delivery names its queue (the event's link, or minus the event's
-- id), and the pending ones are indexed by queue, so a claim reads each queue's head.
ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS queue bigint NOT NULL DEFAULT 0;
UPDATE webhook_deliveries AS d SET queue = coalesce(e.link_id, -e.id) FROM webhook_events AS e WHERE e.id = d.event_id;
CREATE INDEX IF NOT EXISTS webhook_deliveries_queue
    ON webhook_deliveries(endpoint_id, queue, event_id, id) WHERE state = 'pending';
