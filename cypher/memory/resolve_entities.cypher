// mode: read
// params: graph, refs
// Each reference is an entity id (`Label:name`) or a name; returns every entity it can mean
// (a reference that matches nothing returns no row).
UNWIND $refs AS ref
CALL (ref) {
  MATCH (e:Entity {graph: $graph, id: ref})
  RETURN e
  UNION
  MATCH (e:Entity {graph: $graph, name: ref})
  RETURN e
}
RETURN ref, collect(e.id) AS ids
