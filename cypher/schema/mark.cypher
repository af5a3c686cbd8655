// mode: write
// params: version, writtenBy
// Start-up, after the schema: mark the database with this graphsvc's schema and version, unless a newer
// schema marked it meanwhile (a replica of a newer version starting at the same moment). Returns the
// schema found before (0: none).
MERGE (s:GraphsvcSchema {id: 'schema'})
WITH s, coalesce(s.version, 0) AS found, s.writtenBy AS by
FOREACH (_ IN CASE WHEN found <= $version THEN [1] ELSE [] END |
  SET s.version = $version, s.writtenBy = $writtenBy)
RETURN found AS version, by AS writtenBy
