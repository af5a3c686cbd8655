// mode: write
// params: graph
// Empties a graph's term statistics before they are counted again from its memories (upgrade), holding
// the GraphStats lock so that no writer adds to them meanwhile.
MERGE (s:GraphStats {name: $graph})
SET s.textDocs = 0, s.textLength = 0, s.windowDocs = 0, s.windowLength = 0, s.tagsDocs = 0, s.tagsLength = 0
WITH s
CALL (s) {
  MATCH (t:GraphTerm {graphName: $graph})
  DELETE t
}
