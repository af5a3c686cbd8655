// mode: read
// params: graph, cap
// How many of a graph's memories wait for their vector, counted up to `cap` (recall's `pending`): a seek
// on the backlog's own index (schema/unembedded_graph), whatever the other graphs' backlogs hold.
MATCH (m:Unembedded {graph: $graph})
USING INDEX m:Unembedded(graph)
WITH m LIMIT $cap
RETURN count(m) AS pending
