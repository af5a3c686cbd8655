// mode: write
// params: graph, limit
// Takes back up to `limit` entities that extraction made for an import's memories (exports/undo.py):
// those only extraction made that nothing reaches any more, as extract/store deletes them.
MATCH (e:Entity {graph: $graph})
WHERE e.source = 'extracted' AND NOT EXISTS { (e)--() }
WITH e LIMIT $limit
DELETE e
RETURN count(*) AS removed
