// mode: read
// params: graph, from, to, reach, limit
// The memories of the graph whose times (`timeFrom`..`timeTo`, epoch ms: the hull of when each
// happened and the times its text names) overlap the window [from, to), earliest end first, read
// in the order of the index on (graph, timeTo) and so stopping after `limit` (services/recall/timing.py).
// A memory whose times end more than `reach` after the window is left to its keywords: the bound
// keeps the scan to the window's neighbourhood on a graph of many later memories.
MATCH (n:Memory)
WHERE n.graph = $graph AND n.timeTo > $from AND n.timeTo <= $to + $reach AND n.timeFrom < $to
WITH n
ORDER BY n.timeTo
LIMIT $limit
RETURN n.id AS id, 'Memory' AS label, n.text AS text, n.tags AS tags, n.seq AS seq,
       [(n)-[:IN_BATCH]->(b:Batch) WHERE b.status IN ['INCLUDED', 'FINALIZED'] | b.root][0] AS anchorId,
       COUNT { (n)--() } AS degree
