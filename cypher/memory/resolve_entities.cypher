// mode: read
// params: graph, refs
// Each reference is an entity id (`Label:name`) or a name; returns every entity it can mean
// (a reference that matches nothing returns no row). A name that an agent's entity holds means the
// agent's: an entity extraction made of the same name (source 'extracted') does not make it ambiguous.
UNWIND $refs AS ref
CALL (ref) {
  MATCH (e:Entity {graph: $graph, id: ref})
  RETURN e
  UNION
  MATCH (e:Entity {graph: $graph, name: ref})
  RETURN e
}
WITH ref, collect(e) AS found
WITH ref, found, [e IN found WHERE e.source IS NULL] AS given
RETURN ref, [e IN CASE WHEN given = [] THEN found ELSE given END | e.id] AS ids
