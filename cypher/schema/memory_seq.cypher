// mode: schema
// params:
// A memory's position in its graph's remember order: finds the neighbours of a window in order.
CREATE INDEX memory_graph_seq IF NOT EXISTS FOR (m:Memory) ON (m.graph, m.seq)
