// mode: write
// params: graphs, limit
// Takes (returns and deletes) up to `limit` pending TermDelta nodes of `graphs` (sorted, so that folders
// lock them in one order), graph by graph in that order, holding each graph's GraphStats lock (the node
// created for a new graph) until the caller has added them to the counters (memory/count) and
// committed: folders of a graph, on any replica, queue here, and none takes a delta twice. Every lock
// is taken before any delta is read. A transaction sorts at most `limit` deltas of each graph, however
// many a backlog holds.
UNWIND $graphs AS graph
MERGE (s:GraphStats {name: graph})
SET s.lock = true
REMOVE s.lock
WITH collect(graph) AS graphs
UNWIND graphs AS graph
CALL (graph) {
  MATCH (d:TermDelta {graphName: graph})
  RETURN d
  LIMIT $limit
}
WITH d ORDER BY d.graphName LIMIT $limit
WITH d, properties(d) AS delta
DELETE d
RETURN delta
