// mode: write
// params: graph, windows
// Returns each window it replaced, for the graph's term statistics (memory/count_terms).
UNWIND $windows AS w
MATCH (m:Memory {graph: $graph, id: w.id})
WITH m, w, m.window AS old
SET m.window = w.window
RETURN old, w.window AS new
