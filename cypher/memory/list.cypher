// mode: read
// params: graph, tags, under, ids, current, now, skip, limit
// A page of the graph's memories holding every tag of `tags` and, when `under` is given, that tag or one
// beneath it (tags read as paths), and among `ids` when it is not empty; with `current`, only those none supersedes and still valid at `now`.
// Newest first. The (graph, id) index reads just the graph's memories (every memory id starts mem_).
MATCH (m:Memory {graph: $graph})
USING INDEX SEEK m:Memory(graph, id)
WHERE m.id STARTS WITH 'mem_'
  AND (size($ids) = 0 OR m.id IN $ids)
  AND all(tag IN $tags WHERE tag IN m.tags)
  AND ($under IS NULL OR any(tag IN m.tags WHERE tag = $under OR tag STARTS WITH $under + '/'))
  AND (NOT $current OR (m.validTo IS NULL OR m.validTo > $now) AND NOT EXISTS { (:Memory)-[:SUPERSEDES]->(m) })
WITH m
ORDER BY m.createdAt DESC, m.id
WITH collect(m) AS matching
RETURN size(matching) AS total,
       [m IN matching[$skip..$skip + $limit] |
        {id: m.id, text: m.text, tags: coalesce(m.tags, []), createdAt: m.createdAt,
         supersedes: coalesce(m.supersedes, []), data: m.data}] AS page
