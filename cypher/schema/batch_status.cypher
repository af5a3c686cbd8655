// mode: schema
// params:
CREATE INDEX batch_status IF NOT EXISTS FOR (b:Batch) ON (b.status)
