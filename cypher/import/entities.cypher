// mode: write
// params: graph, rows
// A page of an export's entities (`rows`: id, label, name, normName (derived here), source: 'extracted'
// for one only extraction made, else null; nothing else of the file), merged by id so a resumed import
// writes nothing twice; an entity a relation already named (as its end) gets its label and name here.
UNWIND $rows AS row
MERGE (e:Entity {graph: $graph, id: row.id})
SET e.label = row.label, e.name = row.name, e.normName = row.normName, e.source = row.source
SET e:$(row.label)
RETURN count(e) AS written
