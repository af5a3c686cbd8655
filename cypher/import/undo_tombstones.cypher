// mode: write
// params: graph, ids
// Takes back the tombstones of an import's memories (exports/undo.py): the file's, and any an agent
// made by forgetting one of the file's memories during the import.
UNWIND $ids AS id
MATCH (t:Tombstone {graph: $graph, id: id})
DETACH DELETE t
RETURN count(*) AS removed
