// mode: read
// params:
// The graphs with TermDelta nodes not folded into their counters yet, and how many each has (left by
// a stopped process, or waiting for the fold: services/index/term_fold.py). A delta that a fold deletes
// while this reads it has no graph any more and is left out.
MATCH (d:TermDelta)
WITH d.graphName AS graph
WHERE graph IS NOT NULL
RETURN graph, count(*) AS deltas
