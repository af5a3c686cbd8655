// mode: write
// params: graph, count
// Reserves `count` positions in the graph's remember order and returns the last four memories before
// them (oldest first). Setting `lock` first takes the state's write lock, so concurrent writers to one
// graph queue here: no two share a position and each sees the other's memories as neighbours.
MERGE (s:GraphState {name: $graph})
SET s.lock = true
WITH s
SET s.seq = coalesce(s.seq, 0) + $count
REMOVE s.lock
WITH s.seq - $count AS base
CALL (base) {
  MATCH (p:Memory {graph: $graph})
  WHERE p.seq <= base
  WITH p ORDER BY p.seq DESC LIMIT 4
  RETURN reverse(collect({id: p.id, text: p.text})) AS recent
}
RETURN base, recent
