// mode: write
// params: graph, limit
// Takes (returns and deletes) up to `limit` of the graph's pending TermDelta nodes, holding its GraphStats lock (the
// node created for a new graph) until the caller has added them to the counters (memory/count) and
// committed: folders of one graph, on any replica, queue here, and none takes a delta twice.
MERGE (s:GraphStats {name: $graph})
SET s.lock = true
REMOVE s.lock
WITH s
CALL (s) {
  MATCH (d:TermDelta {graphName: $graph})
  WITH d LIMIT $limit
  WITH d, properties(d) AS delta
  DELETE d
  RETURN delta
}
RETURN delta
