// mode: schema
// params:
// The vector index an older graphsvc made (schema/old_vector_index.cypher), dropped at start-up before
// memory_embedding.cypher makes it again; the vectors stay on the memories.
DROP INDEX memory_embedding IF EXISTS
