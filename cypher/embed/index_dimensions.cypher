// mode: read
// params:
// The dimensions of the vector index as it exists (none before the schema creates it): an index made
// for another model is refused at start-up (services/embeddings.py: EmbeddingService.start).
SHOW VECTOR INDEXES YIELD name, options
WHERE name = 'memory_embedding'
RETURN options.indexConfig['vector.dimensions'] AS dimensions
