// mode: schema
// params:
// A graph's term statistics not folded into its counters yet (memory/commit, memory/take_deltas):
// recall reads them with the counters.
CREATE INDEX term_delta_graph IF NOT EXISTS FOR (d:TermDelta) ON (d.graphName)
