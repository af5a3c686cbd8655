// mode: read
// params: graph
// Every on-chain batch of the graph, in order (one per anchor: few).
MATCH (b:Batch {graph: $graph})
WHERE b.status IN ['INCLUDED', 'FINALIZED']
RETURN b {.root, .seq, .count, .graphTag, .prevRoot, .chainId, .contract, .txHash, .blockNumber,
          .anchoredAt} AS batch, b.manifestProof AS manifestProof
ORDER BY b.seq
