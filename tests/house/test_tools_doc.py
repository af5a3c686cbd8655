"""docs/tools.md is held against the operations table (services/operations.py) and the app's REST
routes: a tool, an input field, a bound, a default, an output field or a route that the page names
and the code does not (or the other way round) fails here. No Neo4j: the app is built, never started."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from graphsvc.services.operations import OPERATIONS, TOOLS, Operation

PAGE = Path(__file__).resolve().parents[2] / "docs" / "tools.md"
MAIN, LOCUS = "| tool | input | output |", "| tool | parameters | on graphsvc's model |"
ROUTE = re.compile(r"`(GET|POST|DELETE) (/v1/[^`?\s]+)")
BOUNDS = re.compile(r"(\d[\d,]*)\u2013(\d[\d,]*)")  # the page writes 1 to 50 with an en dash
LIMITS = (
    ("minimum", "maximum"),
    ("minLength", "maxLength"),
    ("minItems", "maxItems"),
    ("minProperties", "maxProperties"),
)


def _table(header: str) -> dict[str, list[str]]:
    """The rows of the page's table under `header`: the tool's name and its other cells."""
    lines = PAGE.read_text().splitlines()
    start = lines.index(header) + 2
    rows: dict[str, list[str]] = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        name, *cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        rows[name] = cells
    return rows


def _split(text: str) -> list[str]:
    """`text` cut at its commas outside brackets, braces, backticks and numbers (1,000)."""
    items, depth, quoted, start = [], 0, False, 0
    for i, char in enumerate(text):
        if char == "`":
            quoted = not quoted
        elif not quoted and char in "({[":
            depth += 1
        elif not quoted and char in ")}]":
            depth -= 1
        elif char == "," and depth == 0 and not quoted and not text[i - 1 : i + 2].replace(",", "").isdigit():
            items.append(text[start:i].strip())
            start = i + 1
    return [*items, text[start:].strip()]


def _name(token: str) -> str:
    """A field as the page writes it (`entities[] {label, name}`, `query?`) without its marks."""
    found = re.match(r"[A-Za-z_]+", token.strip("`{ "))
    assert found, f"no field in {token!r}"
    return found.group()


def _inputs(cell: str) -> dict[str, str]:
    """Each input field the cell names, with the words the page says of it."""
    found: dict[str, str] = {}
    for item in _split(cell):
        head = item.split(" (", 1)[0]
        for token in re.findall(r"`([^`]+)`", head):
            found[_name(token)] = item
    return found


@cache
def _schema(model: type[Any]) -> dict[str, Any]:
    return model.model_json_schema(by_alias=True)


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    """`node` and whatever it stands for: its $ref, its anyOf branches, its items."""
    if "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
    found = [node]
    for branch in node.get("anyOf", []):
        found += _resolve(schema, branch)
    if "items" in node:
        found += _resolve(schema, node["items"])
    return found


def _properties(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    return {k: v for n in _resolve(schema, node) for k, v in n.get("properties", {}).items()}


def _tool(name: str) -> Operation:
    return next(op for op in TOOLS if op.name == name)


def test_the_page_lists_every_tool_once_and_no_other() -> None:
    documented = [*_table(MAIN), *_table(LOCUS)]
    assert sorted(documented) == sorted(op.name for op in TOOLS)


@pytest.mark.parametrize("name", list(_table(MAIN)) + list(_table(LOCUS)))
def test_a_tools_input_fields_are_its_models_but_graph_which_every_tool_takes(name: str) -> None:
    cells = {**_table(MAIN), **_table(LOCUS)}[name]
    schema = _schema(_tool(name).input)
    assert set(_inputs(cells[0])) == set(schema["properties"]) - {"graph"}


def _default(said: str) -> str | None:
    """The default the page gives in a field's last parentheses: `(10)`, or `(a, b; all)` for a choice."""
    last = re.search(r"\(([^()]*)\)$", said)
    if last is None:
        return None
    value = last.group(1).rsplit(";", 1)[-1].strip().removeprefix("default ")
    return value if re.fullmatch(r"[\w.]+", value) and not BOUNDS.search(last.group(1)) else None


@pytest.mark.parametrize("name", list(_table(MAIN)) + list(_table(LOCUS)))
def test_the_bounds_and_defaults_the_page_gives_are_the_models(name: str) -> None:
    cells = {**_table(MAIN), **_table(LOCUS)}[name]
    schema = _schema(_tool(name).input)
    for field, said in _inputs(cells[0]).items():
        nodes = _resolve(schema, schema["properties"][field])
        held = {(n.get(lo), n.get(hi)) for n in nodes for lo, hi in LIMITS}
        for low, high in BOUNDS.findall(said):
            pair = (int(low.replace(",", "")), int(high.replace(",", "")))
            assert pair in held, f"{name}.{field}: the page says {low} to {high}, the model {held}"
        for most in re.findall(r"up to (\d[\d,]*)", said):
            assert int(most.replace(",", "")) in {hi for _, hi in held}, f"{name}.{field}: up to {most}"
        if (value := _default(said)) is not None:
            assert str(schema["properties"][field].get("default")).lower() == value.lower(), f"{name}.{field}"
        if re.search(rf"`{field}(\[\])?\?", said):
            assert field not in schema.get("required", []), f"{name}.{field} is required"


def _shape_holds(schema: dict[str, Any], node: dict[str, Any], shown: str, where: str) -> None:
    """The fields `shown` (`a, b[] {c, d}`) are those of `node`, and so on inside, at every depth."""
    items = {_name(item): item for item in _split(shown)}
    properties = _properties(schema, node)
    assert set(items) == set(properties), f"{where}: the page shows {sorted(items)}"
    for field, item in items.items():
        if inner := re.search(r"\{(.*)\}", item):
            _shape_holds(schema, properties[field], inner.group(1), f"{where}.{field}")


@pytest.mark.parametrize("name", list(_table(MAIN)))
def test_a_tools_output_fields_are_its_models_at_every_depth_shown(name: str) -> None:
    schema = _schema(_tool(name).output)
    shown = re.search(r"`\{(.*?)\}`", _table(MAIN)[name][1])
    assert shown, f"{name}: no output shape"
    _shape_holds(schema, schema, shown.group(1), name)


def _expanded(path: str) -> list[str]:
    """`/v1/locus/{a,b}` as the paths it stands for; `{id}` stays a memory id's segment."""
    if (group := re.search(r"\{([^}]*,[^}]*)\}", path)) is None:
        return [path]
    return [path[: group.start()] + one + path[group.end() :] for one in group.group(1).split(",")]


def test_every_rest_route_the_page_names_is_served_and_every_operation_route_is_named() -> None:
    from graphsvc.app import create_app

    served = {
        (method.upper(), path.replace("{memory_id}", "{id}"))
        for path, methods in create_app().openapi()["paths"].items()
        for method in methods
        if path.startswith("/v1/")
    }
    named = {(m, p) for m, path in ROUTE.findall(PAGE.read_text()) for p in _expanded(path)}
    assert named <= served, f"the page names routes the app does not serve: {sorted(named - served)}"
    routed = {
        (op.route.method, "/v1" + op.route.path.replace("{memory_id:memory_id}", "{id}"))
        for op in OPERATIONS
        if op.route is not None
    }
    assert routed <= named, f"routes the page does not name: {sorted(routed - named)}"
