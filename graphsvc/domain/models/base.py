"""The contract's ground: bounds, patterns and validators shared by every tool's models, the field
types built from them, and the base classes of inputs and outputs (domain/models/__init__.py)."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, cast

import rfc8785
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
)
from typing_extensions import TypeAliasType

from graphsvc.domain import reserved
from graphsvc.domain.spans import parse_occurred

DEFAULT_GRAPH = "default"
CONTEXT_NODE_CAP = 300
LABEL = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"
REL_TYPE = r"^[A-Z][A-Z0-9_]{0,63}$"
# What graphsvc's statements name (domain/reserved.py): never a tenant's label or relation type.
RESERVED_LABELS = reserved.NAMES
RESERVED_TYPES = frozenset(name for name in reserved.NAMES if re.fullmatch(REL_TYPE, name))
# A relation's own properties, which `link` props cannot set: its id, its graph, who made it (`source`
# agent or extracted, the `writerToken`, the `extractor`), and every key a statement reads on a relation.
RESERVED_PROPS = frozenset({"id", "graph", "source", "writerToken", "extractor"}) | reserved.RELATION_KEYS
INT64 = (-(2**63), 2**63 - 1)  # what a Neo4j property holds
MAX_JSON_DEPTH = 64
# Each pattern is checked here and published in the JSON schemas (MCP tools/list, OpenAPI), so a
# client that keeps to the schema is never refused.
CONTROL_CHARS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f"
# Whitespace to Python (str.isspace) and to JSON Schema's regexes alike, spelled out: `\s` differs.
SPACES = r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
CLEAN_TEXT = rf"^[^{CONTROL_CHARS}]*[^{SPACES}{CONTROL_CHARS}][^{CONTROL_CHARS}]*$"
NOT_BLANK = rf"[^{SPACES}]"
PROP_KEY = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
MEMORY_ID = r"^mem_[A-Za-z0-9]{1,64}$"
_LABEL = re.compile(LABEL)
_REL_TYPE = re.compile(REL_TYPE)
_PROP_KEY = re.compile(PROP_KEY)
CONTROL = re.compile(f"[{CONTROL_CHARS}]")
_WORDY = re.compile(NOT_BLANK)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _nfc(value: str) -> str:
    return unicodedata.normalize("NFC", value)


def _clean_text(value: str) -> str:
    value = _nfc(value)
    if not has_words(value):
        raise ValueError("must not be blank")
    if CONTROL.search(value):
        raise ValueError("must not contain control characters")
    return value


def has_words(value: str) -> bool:
    """Whether `value` holds more than whitespace (as NOT_BLANK, the published pattern, says)."""
    return _WORDY.search(value) is not None


def _not_blank(value: str) -> str:
    if not has_words(value):
        raise ValueError("must not be blank")
    return value


def check_label(value: str) -> str:
    if not _LABEL.fullmatch(value):
        raise ValueError("a label is a letter then up to 63 letters, digits or '_' (e.g. Person, Token)")
    if value in RESERVED_LABELS:
        raise ValueError(f"label {value!r} is reserved")
    return value


def check_rel_type(value: str, *, allow_reserved: bool = False) -> str:
    if not _REL_TYPE.fullmatch(value):
        raise ValueError("a relation type is UPPER_SNAKE_CASE (e.g. TRADES_ON)")
    if value in RESERVED_TYPES and not allow_reserved:
        raise ValueError(f"relation type {value!r} is reserved")
    return value


def _check_edge_type(value: str) -> str:
    return check_rel_type(value, allow_reserved=True)


def json_problem(value: Any, depth: int = 0) -> str | None:
    """Why `value` (parsed JSON) cannot be stored, or None: a number that is not finite (NaN, 1e999),
    a string that is not valid Unicode (a lone surrogate), or nesting deeper than MAX_JSON_DEPTH."""
    if depth > MAX_JSON_DEPTH:
        return f"nested deeper than {MAX_JSON_DEPTH} levels"
    if isinstance(value, float) and not math.isfinite(value):
        return "numbers must be finite (no NaN or Infinity)"
    if isinstance(value, str):
        return None if value.isascii() or _encodes(value) else "text must be valid Unicode"
    if isinstance(value, dict):
        mapping = cast(dict[Any, Any], value)
        value = [*mapping.keys(), *mapping.values()]
    if isinstance(value, list | tuple):
        items = cast(Sequence[Any], value)
        return next((p for item in items if (p := json_problem(item, depth + 1))), None)
    return None


def _encodes(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    return "number" if _number(value) else type(value).__name__


def _prop_value(key: str, value: Any) -> Any:
    """A property value as Neo4j stores it: a scalar or a list of one kind, integers within int64
    (a list of numbers holding a float holds floats only)."""
    items: list[Any] = cast(list[Any], value) if isinstance(value, list) else [value]
    if not all(isinstance(v, str | bool | int | float) for v in items) or len({_kind(v) for v in items}) > 1:
        raise ValueError(f"property {key!r} must be a string, number, boolean or a list of one of those")
    if any(_number(v) and isinstance(v, int) and not INT64[0] <= v <= INT64[1] for v in items):
        raise ValueError(f"property {key!r}: integers must lie within the 64-bit range")
    if isinstance(value, list) and any(isinstance(v, float) for v in items):
        return [float(v) for v in items]
    return cast(Any, value)


def check_props(props: dict[str, Any]) -> dict[str, Any]:
    for key in props:
        if not _PROP_KEY.fullmatch(key) or key in RESERVED_PROPS:
            raise ValueError(f"property name {key!r} is not allowed")
    return {key: _prop_value(key, value) for key, value in props.items()}


DATA_MAX = 65_536
SAFE_INT = 2**53 - 1  # JSON's exact integers: remember's content key is canonical JSON (RFC 8785) of `data`


def check_data(data: dict[str, Any]) -> dict[str, Any]:
    if len(json.dumps(data, ensure_ascii=False, separators=(",", ":"))) > DATA_MAX:
        raise ValueError(f"data is at most {DATA_MAX:,} characters as JSON")
    try:
        rfc8785.dumps(data)  # remember's content key is taken over it
    except rfc8785.CanonicalizationError as e:
        raise ValueError(f"data's integers must lie within ±{SAFE_INT} (JSON's exact range)") from e
    return data


# `data` as the schemas publish it, every bound the server holds it to: JSON values whose integers lie
# within ±SAFE_INT at any depth (a number with a fraction, or an integer within them). Validation is
# check_data's, which names the bound.
_FRACTION: dict[str, Any] = {"type": "number", "not": {"type": "integer"}}
JsonValue = TypeAliasType(
    "JsonValue",
    Annotated[int, Field(ge=-SAFE_INT, le=SAFE_INT)]
    | Annotated[float, WithJsonSchema(_FRACTION)]
    | str
    | bool
    | list["JsonValue"]
    | dict[str, "JsonValue"]
    | None,
)
Data = Annotated[
    dict[str, Any],
    BeforeValidator(lambda value: value, json_schema_input_type=dict[str, JsonValue]),
    AfterValidator(check_data),
]


def _schema_extra(pattern: str, reserved: frozenset[str] = frozenset()) -> dict[str, Any]:
    extra: dict[str, Any] = {"pattern": pattern}
    if reserved:
        extra["not"] = {"enum": sorted(reserved)}
    return extra


# Published bounds are the doubles nearest 2**63 inside int64: validators that compare numbers as
# doubles then never call an out-of-range integer valid.
_PROP_INT = 2**63 - 1024
_PROP_NUMBER = {
    "anyOf": [
        {"type": "integer", "minimum": -_PROP_INT, "maximum": _PROP_INT},
        {"type": "number", "not": {"type": "integer"}},
    ]
}
PROPS_SCHEMA: dict[str, Any] = {
    "propertyNames": {"pattern": PROP_KEY, "not": {"enum": sorted(RESERVED_PROPS)}},
    "additionalProperties": {
        "anyOf": [
            {"type": "string"},
            {"type": "boolean"},
            _PROP_NUMBER,
            {"type": "array", "items": {"type": "string"}},
            {"type": "array", "items": {"type": "boolean"}},
            {"type": "array", "items": _PROP_NUMBER},
        ]
    },
}

GRAPH = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
Graph = Annotated[str, Field(pattern=GRAPH, description="Tenant graph")]
Text = Annotated[
    str,
    Field(min_length=1, max_length=4000, json_schema_extra=_schema_extra(CLEAN_TEXT)),
    AfterValidator(_clean_text),
]
Name = Annotated[
    str,
    Field(min_length=1, max_length=200, json_schema_extra=_schema_extra(CLEAN_TEXT)),
    AfterValidator(_clean_text),
]
Label = Annotated[
    str,
    Field(min_length=1, max_length=64, json_schema_extra=_schema_extra(LABEL, RESERVED_LABELS)),
    AfterValidator(check_label),
]
RelType = Annotated[
    str,
    Field(min_length=1, max_length=64, json_schema_extra=_schema_extra(REL_TYPE, RESERVED_TYPES)),
    AfterValidator(check_rel_type),
]
EdgeType = Annotated[
    str,
    Field(min_length=1, max_length=64, json_schema_extra=_schema_extra(REL_TYPE)),
    AfterValidator(_check_edge_type),
]
Tag = Annotated[
    str,
    Field(min_length=1, max_length=64, json_schema_extra=_schema_extra(CLEAN_TEXT)),
    AfterValidator(_clean_text),
]
Query = Annotated[
    str,
    Field(min_length=1, max_length=4000, json_schema_extra=_schema_extra(NOT_BLANK)),
    AfterValidator(_not_blank),
]
Id = Annotated[str, Field(min_length=1, max_length=300)]
# An ISO 8601 instant; one without a timezone is taken as UTC. Stored as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
Instant = Annotated[datetime, AfterValidator(_utc)]
MemoryId = Annotated[str, Field(pattern=MEMORY_ID, description="Id of the Memory node (mem_...)")]
# A year, month, day or instant (domain/when.py), kept with its precision: `2023`, `2023-05`,
# `2023-05-07`, or an instant stored as `YYYY-MM-DDTHH:MM:SS.mmmZ` (no timezone: UTC). The published
# pattern holds the calendar (30 February, leap days), so a value that keeps to it is never refused
# (but for an offset that moves an instant out of the years 1000-9999).
_YEAR = r"[1-9][0-9]{3}"
_DAY = (
    rf"{_YEAR}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)"
    r"|02-(0[1-9]|1[0-9]|2[0-8]))"
    r"|([1-9][0-9](0[48]|[2468][048]|[13579][26])|(1[26]|[2468][048]|[3579][26])00)-02-29"
)
_TIME = (
    r"[T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?"
)
WHEN = rf"^({_YEAR}(-(0[1-9]|1[0-2]))?|({_DAY})({_TIME})?)$"


def _when(value: str) -> str:
    return parse_occurred(value).text


When = Annotated[
    str,
    Field(min_length=4, max_length=40, json_schema_extra={"pattern": WHEN}),
    AfterValidator(_when),
]


class ContractInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        problem = json_problem(value)
        if problem:
            raise ValueError(problem)
        return value


class ContractOutput(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class GraphInput(ContractInput):
    graph: Graph = DEFAULT_GRAPH


class IdInput(ContractInput):
    id: MemoryId
    graph: Graph = DEFAULT_GRAPH
