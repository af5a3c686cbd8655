// mode: write
// params: graph, ids
// Takes back a page of an import's entities (exports/undo.py), once its memories are gone: each that no
// memory reaches, with its relations. One a memory remembered during the import reaches is kept.
UNWIND $ids AS id
MATCH (e:Entity {graph: $graph, id: id})
WHERE NOT EXISTS { MATCH (:Memory)-->(e) }
DETACH DELETE e
RETURN count(*) AS removed
