"""`graphsvc`, the command line: main.py builds the parser, each command lives in the module of its area
(stack: up and serve; tokens; chain: anchor, verify, proof, verify-bundle, deploy-contract; data: import,
schema apply, fetch-model; export: export, import-export, audit, graph-tag; mcp: mcp and connect)."""

from graphsvc.cli.main import main

__all__ = ["main"]
