// mode: write
// params: rows
// Each entity's normalised name (`rows`: graph, id, normName), for those written before extraction.
UNWIND $rows AS row
MATCH (e:Entity {graph: row.graph, id: row.id})
SET e.normName = row.normName
RETURN count(e) AS named
