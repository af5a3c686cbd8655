// mode: read
// params: limit
// Up to `limit` entities without a normalised name (written before extraction existed): the worker
// names them (extract/name) before it extracts, so extracted names meet them.
MATCH (e:Entity)
WHERE e.normName IS NULL
RETURN e.graph AS graph, e.id AS id, e.name AS name
LIMIT $limit
