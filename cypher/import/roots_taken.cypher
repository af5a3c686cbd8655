// mode: read
// params: graph, roots
// Batch roots of an export that this server already holds for another graph (a root is unique).
UNWIND $roots AS root
MATCH (b:Batch {root: root})
WHERE b.graph <> $graph
RETURN collect(b.root) AS taken
