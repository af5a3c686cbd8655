// mode: read
// params: graph, under, skip, limit
// A page of the graph's tags (all, or `under` and those beneath it, tags read as paths) in order, with
// how many memories hold each.
MATCH (m:Memory {graph: $graph})
USING INDEX SEEK m:Memory(graph, id)
WHERE m.id STARTS WITH 'mem_'
UNWIND coalesce(m.tags, []) AS tag
WITH tag
WHERE $under IS NULL OR tag = $under OR tag STARTS WITH $under + '/'
WITH tag, count(*) AS memories
ORDER BY tag
WITH collect({tag: tag, memories: memories}) AS matching
RETURN size(matching) AS total, matching[$skip..$skip + $limit] AS page
