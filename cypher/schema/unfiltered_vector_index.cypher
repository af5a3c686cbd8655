// mode: schema
// params:
// The upgrade to schema 2, for a database marked below it or not marked (store/graph.py apply_schema):
// the vector index an older graphsvc made holds no graphKey, and `IF NOT EXISTS` would keep it, so it is
// dropped and memory_embedding.cypher makes it again from the stored vectors. Nothing to drop on a new
// database.
DROP INDEX memory_embedding IF EXISTS
