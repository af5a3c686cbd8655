// mode: read
// params: id
MATCH (t:ApiToken {id: $id})
RETURN t.hash AS hash, t.boundGraph AS graph, t.scopes AS scopes, t.expiresAt AS expiresAt, t.revoked AS revoked
