"""The one-way layers hold: leaves import no drivers, interfaces never import each other."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "graphsvc"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _imported(path: Path) -> set[str]:
    """`_imports` and, for `from a import b`, `a.b` too: the module that may be what is imported."""
    names = _imports(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def _modules(subpackage: str) -> list[Path]:
    root = PACKAGE / subpackage
    return sorted(root.rglob("*.py")) if root.is_dir() else [root.with_suffix(".py")]


RULES = [
    # (where, may not import)
    ("errors", ("neo4j", "web3", "fastapi", "mcp", "graphsvc.")),
    ("config", ("neo4j", "web3", "fastapi", "mcp", "graphsvc.store", "graphsvc.services")),
    (
        "services",
        (
            "neo4j",
            "web3",
            "fastapi",
            "mcp",
            "graphsvc.store",
            "graphsvc.chain",
            "graphsvc.rest",
            "graphsvc.mcpserver",
            "graphsvc.http",
            "graphsvc.encoder",
            "graphsvc.extractor",
            "graphsvc.exports",
            "spacy",
            "onnxruntime",
            "tokenizers",
            "numpy",
        ),
    ),
    # Export and audit, one room: no module of it reaches a driver or an interface; the audit reads
    # the chain over plain JSON-RPC (graphsvc/verifier.py), never through web3.
    (
        "exports",
        (
            "neo4j",
            "web3",
            "eth_account",
            "fastapi",
            "mcp",
            "graphsvc.app",
            "graphsvc.config",
            "graphsvc.store",
            "graphsvc.chain",
            "graphsvc.rest",
            "graphsvc.mcpserver",
            "graphsvc.http",
            "graphsvc.cli",
            "graphsvc.encoder",
            "spacy",
            "onnxruntime",
            "tokenizers",
            "numpy",
        ),
    ),
    # The audit runs with no server: none of graphsvc's services, nor the room's own server side.
    *(
        (
            f"exports/{module}",
            (
                "graphsvc.services",
                "graphsvc.exports.export",
                "graphsvc.exports.importer",
                "graphsvc.exports.rows",
            ),
        )
        for module in ("chain_reads", "audit", "render")
    ),
    ("rest", ("neo4j", "mcp", "graphsvc.store", "graphsvc.mcpserver")),
    (
        "mcpserver",
        (
            "neo4j",
            "fastapi",
            "graphsvc.store",
            "graphsvc.rest",
            "graphsvc.http.edge",
            "graphsvc.http.observe",
        ),
    ),
    # The HTTP edge wraps REST and MCP alike, and imports neither.
    ("http", ("neo4j", "mcp", "graphsvc.store", "graphsvc.rest", "graphsvc.mcpserver")),
    ("browser", ("neo4j", "web3", "mcp", "graphsvc.")),
    # The client (and the integrations on it) read the contract and the error tree, never the server's.
    *(
        (
            where,
            (
                "neo4j",
                "web3",
                "fastapi",
                "mcp",
                "graphsvc.app",
                "graphsvc.config",
                "graphsvc.store",
                "graphsvc.services",
                "graphsvc.chain",
                "graphsvc.rest",
                "graphsvc.mcpserver",
                "graphsvc.http",
                "graphsvc.encoder",
            ),
        )
        for where in ("client", "integrations")
    ),
    ("metrics", ("neo4j", "web3", "fastapi", "mcp", "graphsvc.")),
    ("logs", ("neo4j", "web3", "fastapi", "mcp", "prometheus_client", "graphsvc.store", "graphsvc.services")),
]


@pytest.mark.parametrize(("where", "forbidden"), RULES)
def test_layer_imports_only_what_it_may(where: str, forbidden: tuple[str, ...]) -> None:
    for path in _modules(where):
        bad = {
            name
            for name in _imports(path)
            if name.startswith(forbidden) or name in {f.rstrip(".") for f in forbidden}
        }
        assert not bad, f"{path.relative_to(PACKAGE)} imports {sorted(bad)}"


def test_the_domain_imports_the_standard_library_pydantic_and_the_hashing_codecs_only() -> None:
    allowed = {*sys.stdlib_module_names, "pydantic", "typing_extensions", "rfc8785", "eth_utils", "eth_abi"}
    for path in _modules("domain"):
        bad = {
            name
            for name in _imports(path)
            if name.split(".")[0] not in allowed and not name.startswith("graphsvc.domain")
        }
        assert not bad, f"{path.relative_to(PACKAGE)} imports {sorted(bad)}"


EXPORT_RULES = ("format", "lines", "findings", "shape", "manifests", "extracted", "checks")


@pytest.mark.parametrize("module", EXPORT_RULES)
def test_the_export_format_and_its_rules_import_what_the_domain_may(module: str) -> None:
    """The format and its rules are pure: what graphsvc audit and an import both run on a line."""
    allowed = {*sys.stdlib_module_names, "pydantic", "rfc8785", "eth_utils", "eth_abi"}
    own = tuple(f"graphsvc.exports.{name}" for name in EXPORT_RULES)
    path = PACKAGE / "exports" / f"{module}.py"
    bad = {
        name
        for name in _imports(path)
        if name.split(".")[0] not in allowed and not name.startswith(("graphsvc.domain", *own))
    }
    assert not bad, f"{path.relative_to(PACKAGE)} imports {sorted(bad)}"


def test_only_the_store_imports_the_neo4j_driver() -> None:
    users = {
        path.relative_to(PACKAGE).parts[0]
        for path in PACKAGE.rglob("*.py")
        if any(name == "neo4j" or name.startswith("neo4j.") for name in _imports(path))
    }
    assert users == {"store"}


def test_only_the_chain_package_imports_web3() -> None:
    users = {
        path.relative_to(PACKAGE).parts[0]
        for path in PACKAGE.rglob("*.py")
        if any(name.split(".")[0] in ("web3", "eth_account") for name in _imports(path))
    }
    assert users == {"chain"}


def test_only_the_metrics_module_imports_prometheus_client() -> None:
    """The store hands each statement's time to a callback; the edges call the app's Metrics."""
    users = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if any(name.split(".")[0] == "prometheus_client" for name in _imports(path))
    }
    assert users == {"metrics.py"}


def test_only_the_extractor_package_imports_spacy() -> None:
    users = {
        path.relative_to(PACKAGE).parts[0]
        for path in PACKAGE.rglob("*.py")
        if any(name.split(".")[0] in ("spacy", "thinc") for name in _imports(path))
    }
    assert users <= {"extractor"}


def test_only_the_encoder_package_imports_the_model_runtime() -> None:
    users = {
        path.relative_to(PACKAGE).parts[0]
        for path in PACKAGE.rglob("*.py")
        if any(name.split(".")[0] in ("onnxruntime", "tokenizers", "numpy") for name in _imports(path))
    }
    assert users == {"encoder"}


SERVICES = PACKAGE / "services"


def _room(module: str) -> str | None:
    """The room of services/ a module is in: its folder (recall, index, anchoring), else its own name."""
    parts = module.split(".")
    return parts[2] if parts[:2] == ["graphsvc", "services"] and len(parts) > 2 else None


def _rooms() -> dict[str, set[str]]:
    """Each room of services/ and the other rooms it imports."""
    rooms: dict[str, set[str]] = {}
    for path in SERVICES.rglob("*.py"):
        here = path.relative_to(SERVICES).parts[0].removesuffix(".py")
        if here != "__init__":
            used = {_room(name) for name in _imported(path)}
            rooms.setdefault(here, set()).update(r for r in used if r is not None and r != here)
    return rooms


def test_no_import_in_services_runs_back_up_the_layers() -> None:
    """The rooms of services/ stand on floors: a room imports only rooms below it, so none imports a room
    that (through others) imports it."""
    rooms, floors = _rooms(), dict[str, int]()

    def floor(room: str, path: tuple[str, ...]) -> int:
        assert room not in path, f"services/ rooms import each other: {' -> '.join((*path, room))}"
        if room not in floors:
            floors[room] = 1 + max((floor(r, (*path, room)) for r in rooms.get(room, ())), default=0)
        return floors[room]

    for room in sorted(rooms):
        floor(room, ())


def test_only_the_service_serving_recall_and_the_composition_root_import_recall() -> None:
    """services/recall/ is recall's pipeline: what the write side stores for it lives below both, in
    services/index/."""
    recall = SERVICES / "recall"
    users = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if not path.is_relative_to(recall)
        and any(name.startswith("graphsvc.services.recall") for name in _imported(path))
    }
    assert users <= {"services/memory.py", "app.py"}
