// mode: schema
// params:
// The end of a memory's times (when it happened, or was remembered, and the times its text names):
// recall finds the memories of a time window by it (memory/in_window).
CREATE INDEX memory_graph_time IF NOT EXISTS FOR (m:Memory) ON (m.graph, m.timeTo)
