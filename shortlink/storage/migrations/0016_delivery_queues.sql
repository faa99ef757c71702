-- Each delivery names its queue: the event's link, or minus the event's id when it has none
-- (storage.webhooks.claim_due sends an endpoint's events of one link one after another). With
-- the queue on the row and an index of the pending ones by queue, a claim reads each queue's
-- head and the few rows after it instead of ranking every pending delivery.
ALTER TABLE webhook_deliveries ADD COLUMN queue INTEGER NOT NULL DEFAULT 0;
UPDATE webhook_deliveries
   SET queue = (SELECT coalesce(e.link_id, -e.id) FROM webhook_events AS e WHERE e.id = webhook_deliveries.event_id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_queue
    ON webhook_deliveries(endpoint_id, queue, event_id, id) WHERE state = 'pending';
