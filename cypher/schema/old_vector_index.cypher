// mode: read
// params:
// Start-up, before the schema: whether the vector index an older graphsvc made must be made again. It
// holds no graphKey (made before Neo4j 2026, when the search could not filter inside the index) or it
// quantizes its vectors (Neo4j 2026.08's default; memory_embedding.cypher says why not). `IF NOT EXISTS`
// would keep it, so it is dropped (schema/drop_vector_index.cypher) and made again from the stored
// vectors. No row on a new database; false once made by this graphsvc, even while it still populates.
SHOW VECTOR INDEXES YIELD name, properties, options
WHERE name = 'memory_embedding'
RETURN NOT 'graphKey' IN properties
  OR coalesce(options.indexConfig['vector.quantization.type'], '') <> 'NONE' AS old
