// mode: write
// params: graph, windows
UNWIND $windows AS w
MATCH (m:Memory {graph: $graph, id: w.id})
SET m.window = w.window
