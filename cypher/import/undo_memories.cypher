// mode: write
// params: graph, ids, lastSeq
// Takes back a page of the memories an import wrote (exports/undo.py): `ids` of the file, at the
// file's positions (<= lastSeq), so never a memory an agent remembered into the graph during the import
// (it took a position after them). Their edges and memberships go with them; returns what the fulltext
// index held of each, for the graph's term statistics (import/term_delta, negative).
UNWIND $ids AS id
MATCH (m:Memory {graph: $graph, id: id})
WHERE m.seq <= $lastSeq
WITH m, m {.text, .window, .tags} AS removed
DETACH DELETE m
RETURN collect(removed) AS removed
