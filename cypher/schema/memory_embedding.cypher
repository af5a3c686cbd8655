// mode: schema
// params:
// Recall's semantic signal (services/embeddings.py): each memory's own text as a unit vector of
// all-MiniLM-L6-v2 (384 floats), written by the background worker. The index spans every graph; the
// statements that query it keep the graph's memories only (embed/nearest.cypher).
CREATE VECTOR INDEX memory_embedding IF NOT EXISTS FOR (m:Memory) ON m.embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}
