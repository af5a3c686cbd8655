// mode: schema
// params:
// The end of when a memory happened (occurredAt's span, else the instant it was remembered): the
// first and last of a graph's are the span a query's year-less date is read in (memory/time_extent).
CREATE INDEX memory_graph_occurred IF NOT EXISTS FOR (m:Memory) ON (m.graph, m.occurredTo)
