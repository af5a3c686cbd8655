// mode: read
// params: graph, contextType, contextName, skip, limit
// Contexts are Context entities named `type:name`; stable order by that name.
MATCH (c:Context {graph: $graph})
WITH c, split(c.name, ':')[0] AS type
WITH c, type, substring(c.name, size(type) + 1) AS name
WHERE ($contextType IS NULL OR type = $contextType) AND ($contextName IS NULL OR name = $contextName)
WITH c, type, name
ORDER BY c.name
WITH collect({node: c, type: type, name: name}) AS matching
WITH size(matching) AS total, matching[$skip..$skip + $limit] AS slice
CALL (slice) {
  UNWIND slice AS x
  WITH x, x.node AS c
  RETURN collect({context_id: c.name, context_type: x.type, context_name: x.name,
                  events: COUNT { (c)<-[:MENTIONS]-(:Memory) }}) AS page
}
RETURN total, page
