// mode: schema
// params:
// The embedding backlog by graph: recall counts the asking graph's memories still waiting for their
// vector (embed/nearest's `pending`) without reading the other graphs' backlogs.
CREATE INDEX unembedded_graph IF NOT EXISTS FOR (m:Unembedded) ON (m.graph)
