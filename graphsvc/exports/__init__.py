"""Export, import and audit: a graph as a file (`graphsvc.export/v1`), moved between servers and
checked against the chain alone. One room, its modules by role, on three floors
(tests/test_layers.py holds them):

    the format and its rules: pure (the standard library, pydantic, graphsvc.domain; no I/O)
        format.py       the records of a line, their order, `seal`; the JSON Schema of a line
        lines.py        how a line is read: bounded, strict JSON
        findings.py     a finding, a batch as seen, a string from the file shown inert
        checks.py       every file rule in one streaming pass, with shape.py (entities and edges)
                        and manifests.py (forget records and manifests)
    the audit: no Neo4j and no server; the chain over plain JSON-RPC (graphsvc/verifier.py's client)
        chain_reads.py  the contract's views at the finalized block: roots, receipts, trust roots,
                        completeness
        audit.py        the file's pass, then the chain's: the report and its exit status
        render.py       the verdict, as text and as JSON
    a server's side: the store through services/ports.py's Protocols
        export.py       a graph's lines, page by page
        importer.py     a file checked, confirmed on chain, then written
        rows.py         what an import writes of each record (allow-lists)

`graphsvc export|import-export|audit|graph-tag` (cli/export.py) and GET /v1/export (rest/export.py)
are its doors. One memory's proof bundle has its own verifier (graphsvc/verifier.py), apart.
"""
