// mode: read
// params:
// The graphs with TermDelta nodes not folded into their counters yet, and how many each has (left by
// a stopped process, or waiting for the fold: services/term_fold.py).
MATCH (d:TermDelta)
RETURN d.graphName AS graph, count(*) AS deltas
