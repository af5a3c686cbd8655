// mode: read
// params:
MATCH (t:ApiToken)
RETURN t.id AS id, t.boundGraph AS graph, t.scopes AS scopes, t.createdAt AS createdAt,
       t.expiresAt AS expiresAt, t.revoked AS revoked
ORDER BY t.createdAt, t.id
