// mode: write
// params: id, hash, graph, scopes, createdAt, expiresAt
// Tokens live outside every tenant graph: `boundGraph` is the one graph the token may touch.
CREATE (t:ApiToken {id: $id, hash: $hash, boundGraph: $graph, scopes: $scopes, createdAt: $createdAt,
                    expiresAt: $expiresAt, revoked: false})
RETURN t.id AS id
