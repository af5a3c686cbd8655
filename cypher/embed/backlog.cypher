// mode: read
// params: top
// Memories not yet embedded, across every graph (`backlog`), the `top` graphs with the most of them
// (`top`: graph, waiting; ties by name: what /metrics shows per graph), and the memories set aside
// (embed/set_aside). Only memories: a node of another kind that carries a label of the backlog is not
// counted.
MATCH (m:Unembedded)
WHERE m:Memory
WITH m.graph AS graph, count(*) AS waiting
ORDER BY waiting DESC, graph
WITH collect({graph: graph, waiting: waiting}) AS graphs, sum(waiting) AS backlog
RETURN backlog, graphs[..$top] AS top, COUNT { MATCH (x:Unembeddable) WHERE x:Memory } AS setAside
