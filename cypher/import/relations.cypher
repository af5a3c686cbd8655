// mode: write
// params: graph, rows
// A page of an export's relations between entities (`rows`: id, rel, from, to, props but `id` and
// `graph`), merged as remember merges them (one per type and pair); an end not written yet is created
// and completed by its entity line.
UNWIND $rows AS row
MATCH (a:Entity {graph: $graph, id: row.from})
MERGE (b:Entity {graph: $graph, id: row.to})
MERGE (a)-[r:$(row.rel)]->(b)
ON CREATE SET r += row.props, r.id = row.id
RETURN count(r) AS written
