// mode: read
// params: graph
// What the fulltext index holds of each memory of the graph (to count its term statistics again).
MATCH (m:Memory {graph: $graph})
RETURN m.text AS text, m.window AS window, m.tags AS tags
