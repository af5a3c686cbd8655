// mode: write
// params: reserved
// Entities that carry a label graphsvc's statements use (`reserved`: domain/reserved.py) lose it: names
// were not checked against every such label before, so a tenant could plant one. Run at start-up. A
// graph's state or statistics that lived on such an entity (another graph's GraphState or GraphStats
// took it for its own, by name) moves to a node of its own, so that graph keeps its positions, tag and
// counts; the entity keeps only an entity's properties. Returns each entity mended.
MATCH (e:Entity)
WITH e, [label IN labels(e) WHERE label IN $reserved AND label <> 'Entity'] AS planted
WHERE planted <> []
WITH e, planted, properties(e) AS found
REMOVE e:$(planted)
SET e = found {.id, .graph, .label, .name, .normName, .source}
WITH e, planted, found
CALL (planted, found) {
  UNWIND [label IN planted WHERE label IN ['GraphState', 'GraphStats']] AS label
  WITH label, found
  WHERE any(key IN keys(found) WHERE NOT key IN ['id', 'graph', 'label', 'name', 'normName', 'source'])
  CREATE (s:$(label))
  SET s = found {.*, id: null, graph: null, label: null, normName: null, source: null}
}
RETURN e.graph AS graph, e.id AS id, planted
