// mode: read
// params: graph, contextType, contextName, skip, limit
// Contexts are Context entities named `type:name`, whose ids are `Context:` and that name: a prefix
// seek of the (graph, id) index reads just the graph's contexts, already in order (by the Context
// label this read every graph's contexts, 50,070 for a graph holding 3, and sorted them).
MATCH (c:Entity {graph: $graph})
USING INDEX SEEK c:Entity(graph, id)
WHERE c.id STARTS WITH 'Context:' AND c:Context
WITH c, split(c.name, ':')[0] AS type
WITH c, type, substring(c.name, size(type) + 1) AS name
WHERE ($contextType IS NULL OR type = $contextType) AND ($contextName IS NULL OR name = $contextName)
WITH c, type, name
ORDER BY c.graph, c.id
WITH collect({node: c, type: type, name: name}) AS matching
WITH size(matching) AS total, matching[$skip..$skip + $limit] AS slice
CALL (slice) {
  UNWIND slice AS x
  WITH x, x.node AS c
  RETURN collect({context_id: c.name, context_type: x.type, context_name: x.name,
                  events: COUNT { (c)<-[r:MENTIONS]-(:Memory) WHERE coalesce(r.source, 'agent') = 'agent' }}) AS page
}
RETURN total, page
