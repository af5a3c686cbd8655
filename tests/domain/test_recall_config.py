"""Recall's one configuration (graphsvc/domain/recall_config.py): read from the environment, checked,
and the documentation's formula and settings table written from it. No Neo4j needed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

from graphsvc.config import EmbeddingModel, Settings
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.encoder.onnx import MODELS
from graphsvc.services.recall import fusion

DOC = Path(__file__).resolve().parents[2] / "docs" / "recall.md"


def _blocks(text: str) -> list[str]:
    """The unlabelled code blocks of a page."""
    return re.findall(r"^```\n(.*?)\n```$", text, re.DOTALL | re.MULTILINE)


def settings_table(config: RecallConfig) -> str:
    """The settings table of docs/recall.md, one row per field of `config`."""
    rows = ["| variable | default | |", "|---|---|---|"]
    for name, info in RecallConfig.model_fields.items():
        value = getattr(config, name)
        shown = json.dumps({k: v.model_dump() for k, v in value.items()}) if name == "calibrations" else value
        default = json.dumps(shown) if isinstance(shown, bool) else shown
        rows.append(f"| `GRAPHSVC_RECALL_{name.upper()}` | `{default}` | {info.description} |")
    return "\n".join(rows)


def test_the_docs_show_the_formula_written_from_the_default_configuration() -> None:
    blocks = _blocks(DOC.read_text())
    assert fusion.keyword_formula(RecallConfig()) in blocks
    assert fusion.formula(RecallConfig()) in blocks


def test_the_docs_list_every_setting_of_recall_with_its_default() -> None:
    text = DOC.read_text()
    shown = text.split("<!-- settings -->\n", 1)[1].split("\n<!-- /settings -->", 1)[0]
    assert shown == settings_table(RecallConfig()), "docs/recall.md's table should read:\n" + settings_table(
        RecallConfig()
    )


def test_the_formula_follows_the_configuration_it_is_written_from() -> None:
    variant = RecallConfig(keyword_weight=4, time_weight=1, named_boost=2, bm25_k1=1.5, bridge_weight=3)
    written = fusion.formula(variant)
    assert written.startswith("score    = 4 · keyword · named + walk + 2 · meaning + time + 16 · inside\n")
    assert "named    = 2 if" in written and "min(1, 2.5 · text" in written
    assert "+ 3 · bridge" in written


def test_the_environment_sets_a_recall_weight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHSVC_RECALL_TIME_WEIGHT", "2.5")
    monkeypatch.setenv("GRAPHSVC_RECALL_TIME_WORDS", "keep")
    recall = Settings().recall
    assert recall.time_weight == 2.5 and recall.time_words == "keep"
    assert recall.keyword_weight == RecallConfig().keyword_weight


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("GRAPHSVC_RECALL_TIME_WEIGHT", "-1"),
        ("GRAPHSVC_RECALL_SPREAD", "1.5"),
        ("GRAPHSVC_RECALL_TIME_WORDS", "some"),
        ("GRAPHSVC_RECALL_KEYWORD_SEEDS", "500"),  # more than the 100 candidates they are taken from
        ("GRAPHSVC_RECALL_UNKNOWN_KNOB", "1"),
        ("GRAPHSVC_RECALL_CALIBRATIONS", '{"bge-small-en-v1.5": {"floor": 0.3, "ceiling": 0.7, "gap": 0.1}}'),
        (
            "GRAPHSVC_RECALL_CALIBRATIONS",
            '{"bge-small-en-v1.5": {"floor": 0.8, "ceiling": 0.7, "gap": 0.1}, '
            '"all-MiniLM-L6-v2": {"floor": 0.2, "ceiling": 0.5, "gap": 0.05}}',
        ),
    ],
)
def test_a_recall_setting_out_of_bounds_stops_the_settings(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError):
        Settings()


def test_every_sentence_model_has_a_calibration() -> None:
    assert set(get_args(EmbeddingModel)) == set(MODELS)
    assert all(RecallConfig().calibration(name) is not None for name in MODELS)
    assert RecallConfig().calibration(None) is None


def test_a_configuration_cannot_be_changed_in_place() -> None:
    config = RecallConfig()
    with pytest.raises(ValidationError):
        config.time_weight = 3  # type: ignore[misc]
    assert config.model_copy(update={"time_weight": 3}).time_weight == 3
