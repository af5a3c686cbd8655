// mode: read
// params:
// Start-up, before the schema: which schema (and graphsvc version) wrote this database; no row when none
// has yet. A database of a newer schema than this graphsvc knows is refused (store/graph.py).
MATCH (s:GraphsvcSchema {id: 'schema'})
RETURN s.version AS version, s.writtenBy AS writtenBy
