// mode: write
// params: graph, from, to, type, props, edgeId
MERGE (a:Entity {graph: $graph, id: $from.id})
  ON CREATE SET a.label = $from.label, a.name = $from.name
SET a:$($from.label)
MERGE (b:Entity {graph: $graph, id: $to.id})
  ON CREATE SET b.label = $to.label, b.name = $to.name
SET b:$($to.label)
MERGE (a)-[r:$($type)]->(b)
  ON CREATE SET r.id = $edgeId
SET r += $props
RETURN r.id AS id, r.id = $edgeId AS created, properties(r) AS props
