// mode: schema
// params:
// Recall's semantic signal (services/embeddings.py): each memory's own text as a unit vector of the
// sentence model (384 floats), written by the background worker. The index spans every graph and
// holds each memory's `graphKey` beside its vector, so that a search filters by graph inside the index
// (embed/nearest.cypher) and never sees another graph's memories. Cypher 25 (Neo4j 2026.01 or later):
// a database made by Neo4j 5 speaks Cypher 5 by default. The vectors are not quantized: Neo4j 2026.08's
// default (one bit per dimension, three times the candidates asked, rescored) answered the search
// embed/nearest.cypher runs more slowly (100,000 vectors: p50 12.3 against 8.8 ms) and no more exactly
// (bench/README.md, *Fourth pass*). An index of this name made by an older graphsvc (without the
// graphKey, or quantized) is dropped first at start-up (schema/old_vector_index.cypher).
CYPHER 25 CREATE VECTOR INDEX memory_embedding IF NOT EXISTS FOR (m:Memory) ON m.embedding WITH [m.graphKey]
OPTIONS {indexConfig: {
  `vector.dimensions`: 384, `vector.similarity_function`: 'cosine', `vector.quantization.type`: 'NONE'
}}
