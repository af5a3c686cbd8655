// mode: write
// params: graph
// Empties a graph's term statistics (counters and pending deltas) before they are counted again from
// its memories, holding the graph's write lock (no remember adds a delta meanwhile) and its GraphStats
// lock (no fold runs meanwhile), in the order the writers take them.
MERGE (g:GraphState {name: $graph})
SET g.lock = true
REMOVE g.lock
MERGE (s:GraphStats {name: $graph})
SET s.textDocs = 0, s.textLength = 0, s.windowDocs = 0, s.windowLength = 0, s.tagsDocs = 0, s.tagsLength = 0
WITH s
CALL (s) {
  MATCH (t:GraphTerm {graphName: $graph})
  DELETE t
}
CALL (s) {
  MATCH (d:TermDelta {graphName: $graph})
  DELETE d
}
