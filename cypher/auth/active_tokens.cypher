// mode: read
// params: now
MATCH (t:ApiToken)
WHERE NOT t.revoked AND (t.expiresAt IS NULL OR t.expiresAt > $now)
RETURN count(t) AS active
