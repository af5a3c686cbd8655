// mode: write
// params: graph, ids
// New memories wait for their embedding: the worker embeds `:Unembedded` memories (embed/claim.cypher).
UNWIND $ids AS id
MATCH (m:Memory {graph: $graph, id: id})
SET m:Unembedded
