// mode: schema
// params:
// The newest finalized batch, read first (anchor/state, at each /metrics scrape).
CREATE INDEX batch_status_anchored IF NOT EXISTS FOR (b:Batch) ON (b.status, b.anchoredAt)
