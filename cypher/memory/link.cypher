// mode: write
// params: graph, from, to, type, props, edgeId, writerToken
// Relates two entities (`from`, `to`: id, label, name, normName; created if new, and an entity that
// only extraction made becomes the agent's, as in memory/commit). A new relation carries
// `source: 'agent'` and the token that wrote it (`writerToken`; null without auth), kept when the same
// relation is linked again (its props are overwritten).
MERGE (a:Entity {graph: $graph, id: $from.id})
  ON CREATE SET a.label = $from.label, a.name = $from.name
SET a:$($from.label), a.normName = $from.normName
REMOVE a.source
MERGE (b:Entity {graph: $graph, id: $to.id})
  ON CREATE SET b.label = $to.label, b.name = $to.name
SET b:$($to.label), b.normName = $to.normName
REMOVE b.source
MERGE (a)-[r:$($type)]->(b)
  ON CREATE SET r.id = $edgeId, r.source = 'agent', r.writerToken = $writerToken
SET r += $props
RETURN r.id AS id, r.id = $edgeId AS created, properties(r) AS props
