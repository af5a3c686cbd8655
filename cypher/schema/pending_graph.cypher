// mode: schema
// params:
// A graph's memories waiting for a batch (anchor/pending): `Pending` is on every graph's memories until
// a seal takes it off, so by the label alone a seal read them all.
CREATE INDEX pending_graph IF NOT EXISTS FOR (m:Pending) ON (m.graph)
