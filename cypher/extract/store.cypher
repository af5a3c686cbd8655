// mode: write
// params: token, rows, extractor
// What `extractor` read in a claimed batch (`rows`: graph, id, `found`: label, name, norm, id, edgeId)
// replaces what an extractor read in those memories before. For each mention, the entity it means:
// the graph's entity of the same normalised name, one an agent gave first (no `source`; agent-given
// entities stay as they are: never relabelled or renamed), else one extraction made; with none, a new
// entity `Label:name` marked `source: 'extracted'`. The memory mentions it through an edge marked
// `source: 'extracted'` with the extractor, unless the memory already mentions it (an agent's edge).
// An entity that only extraction made and that no edge reaches any more is deleted. Only the
// memory's own graph is read or written; a memory forgotten meanwhile, or claimed again by another
// worker after this one's lease ran out, is left alone. The memory leaves the backlog with every mark
// of it (extract/claim, extract/set_aside).
UNWIND $rows AS row
MATCH (m:Memory:Unextracted {graph: row.graph, id: row.id})
WHERE m.extractClaim = $token
CALL (m) {
  OPTIONAL MATCH (m)-[old:MENTIONS {source: 'extracted'}]->(x:Entity)
  DELETE old
  RETURN collect(DISTINCT x) AS formerly
}
CALL (m, row) {
  UNWIND row.found AS f
  CALL (m, f) {
    OPTIONAL MATCH (same:Entity {graph: m.graph, normName: f.norm})
    USING INDEX SEEK same:Entity(graph, normName)
    WITH same ORDER BY coalesce(same.source, '') = 'extracted', same.id LIMIT 1
    OPTIONAL CALL (m, f, same) {
      WITH m, f WHERE same IS NULL
      MERGE (made:Entity {graph: m.graph, id: f.id})
        ON CREATE SET made.label = f.label, made.name = f.name, made.source = 'extracted'
      SET made:$(f.label), made.normName = coalesce(made.normName, f.norm)
      RETURN made
    }
    WITH m, f, coalesce(same, made) AS e
    WHERE NOT EXISTS { (m)-[:MENTIONS]->(e) }
    CREATE (m)-[:MENTIONS {id: f.edgeId, source: 'extracted', extractor: $extractor}]->(e)
  }
}
SET m.extractedWith = $extractor
REMOVE m:Unextracted, m:Unextractable, m.extractClaim, m.extractClaimUntil, m.extractFirst, m.extractQueuedAt,
  m.extractSetAsideBy
// Once for the whole batch: two memories of it may have left the same entity.
WITH count(m) AS stored, collect(formerly) AS formerly
CALL (formerly) {
  UNWIND formerly AS entities
  UNWIND entities AS x
  WITH DISTINCT x
  WHERE x.source = 'extracted' AND NOT EXISTS { (x)--() }
  DELETE x
}
RETURN stored
