// mode: schema
// params:
CALL db.awaitIndexes(300)
