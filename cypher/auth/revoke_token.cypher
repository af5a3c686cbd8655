// mode: write
// params: id
MATCH (t:ApiToken {id: $id})
SET t.revoked = true
RETURN t.id AS id
