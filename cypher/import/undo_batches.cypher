// mode: write
// params: graph, roots
// Takes back an import's batches (exports/undo.py): `roots` of the file, of this graph only.
UNWIND $roots AS root
MATCH (b:Batch {root: root, graph: $graph})
DETACH DELETE b
RETURN count(*) AS removed
