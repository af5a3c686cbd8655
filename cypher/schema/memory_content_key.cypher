// mode: schema
// params:
// Bulk remember is idempotent on content + graph: a repeated item finds its memory here.
CREATE INDEX memory_graph_content IF NOT EXISTS FOR (m:Memory) ON (m.graph, m.contentKey)
