"""Every weight and knob of recall, in one typed value (docs/recall.md shows the formula from it).

The service reads it once from settings (`GRAPHSVC_RECALL_<FIELD>`, e.g. `GRAPHSVC_RECALL_TIME_WEIGHT`)
and hands it to recall; a benchmark passes its variants in (`config.model_copy(update=...)`), never by
changing a module's globals. The defaults are the measured choices (bench/README.md names the pass
that chose each). Not here: how memories are stored (a memory's window of WINDOW neighbours, in
services/recall/ranking.py, is written at remember) and how answers are shaped (scores' decimals).
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from graphsvc.domain.models.recall import Links


class Calibration(BaseModel):
    """How one model's cosines read as meaning: at or below `floor` nothing, from `ceiling` on a
    paraphrase; a candidate `gap` less close than the closest has no relative part."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    floor: float = Field(ge=-1, le=1)
    ceiling: float = Field(ge=-1, le=1)
    gap: float = Field(gt=0, le=2)

    @model_validator(mode="after")
    def _floor_below_ceiling(self) -> Self:
        if self.floor >= self.ceiling:
            raise ValueError("a calibration's floor must be below its ceiling")
        return self


CALIBRATIONS = {  # bench/README.md: Fifth pass
    "bge-small-en-v1.5": Calibration(floor=0.35, ceiling=0.75, gap=0.12),
    "all-MiniLM-L6-v2": Calibration(floor=0.2, ceiling=0.5, gap=0.05),
}


class RecallConfig(BaseModel):
    """Recall's weights and knobs (docs/recall.md: the score, term by term)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # ---- the score: keyword_weight · keyword · (named_boost if named) + walk + meaning_weight · meaning
    #      + time_weight · time
    keyword_weight: float = Field(default=6.0, ge=0, description="a full keyword match (bench: Third pass)")
    keyword_power: float = Field(
        default=1.5, gt=0, description="coverage ^ power: a part of the query counts less than its share"
    )
    meaning_weight: float = Field(default=2.0, ge=0, description="meaning in full (bench: Fifth pass)")
    time_weight: float = Field(
        default=1.5, ge=0, description="a memory wholly inside the window a request names (bench: Third pass)"
    )
    named_boost: float = Field(
        default=1.3, ge=1, description="keyword factor for a memory that mentions an entity the query names"
    )
    spread: float = Field(
        default=0.7,
        ge=0,
        le=1,
        description="a memory's closeness is at least this share of a window neighbour's",
    )
    calibrations: dict[str, Calibration] = Field(
        default_factory=lambda: dict(CALIBRATIONS), description="per sentence model: how its cosines read"
    )
    # ---- keyword scoring: BM25 over each graph's own statistics
    own_text_weight: float = Field(default=0.5, ge=0, description="BM25(own text) beside BM25(window)")
    tags_weight: float = Field(default=1.0, ge=0, description="BM25(tags) beside BM25(window)")
    bm25_k1: float = Field(default=1.2, gt=0, description="term saturation (Lucene's)")
    bm25_b: float = Field(default=0.75, ge=0, le=1, description="length normalisation (Lucene's)")
    # ---- the candidates
    candidates: int = Field(default=100, ge=1, le=1000, description="Lucene's top hits rescored")
    keyword_seeds: int = Field(default=50, ge=1, le=1000, description="the best rescored: the keyword hits")
    similar_hits: int = Field(default=30, ge=0, le=1000, description="keyword hits whose cosines are read")
    semantic_seeds: int = Field(default=20, ge=0, le=1000, description="the graph's nearest memories taken")
    vector_breadth: int = Field(
        default=100, ge=1, le=10_000, description="how many the vector index is asked for (approximate)"
    )
    time_seeds: int = Field(default=50, ge=0, le=1000, description="memories of the window taken")
    # ---- whose edges rank, for a request that does not name its `links` (docs/recall.md, *Whose links*)
    # Agent-given edges only: extracted ones did not gain on the part of LoCoMo's development half that no
    # setting was tuned on (bench/README.md, *Whose links rank*); explore and the Browser keep them.
    links: Links = Field(
        default="agent",
        description="the edges recall's walk follows when a request names none (bench: Links)",
    )
    bridge_links: Links = Field(
        default="agent",
        description="the edges the second pass follows when a request names none (bench: Links)",
    )
    # ---- the second pass through bridges (services/recall/bridges.py)
    bridge_from: int = Field(
        default=5, ge=0, le=50, description="the first pass's best memories the second starts from (0: none)"
    )
    bridge_weight: float = Field(
        default=0.5, ge=0, description="a memory fully bridged to the first pass's best (bench: Bridges)"
    )
    bridge_max_degree: int = Field(
        default=50, ge=2, le=10_000, description="an entity more memories mention is a hub: no bridge"
    )
    bridge_candidates: int = Field(
        default=30, ge=0, le=300, description="memories the second pass adds, best bridged first"
    )
    # ---- time
    time_windows: bool = Field(
        default=True, description="read the window a query's time expressions name (false: none, no 'when')"
    )
    time_words: Literal["keep", "relative", "all"] = Field(
        default="relative", description="which of the query's time expressions leave its keywords"
    )
    when_score: float = Field(
        default=0.5, ge=0, le=1, description="the time term of a memory that states a time, asked 'when'"
    )
    time_reach_days: int = Field(
        default=366, ge=1, description="memories whose times end later after the window: keywords only"
    )
    narrow_days: int = Field(
        default=7,
        ge=0,
        le=366,
        description="a window of at most this many days is narrow: what lies inside it outranks the rest (0: none)",
    )

    @model_validator(mode="after")
    def _seeds_within_candidates(self) -> Self:
        if self.keyword_seeds > self.candidates:
            raise ValueError("keyword_seeds must not exceed candidates")
        if self.semantic_seeds > self.vector_breadth:
            raise ValueError("semantic_seeds must not exceed vector_breadth")
        return self

    @property
    def field_weights(self) -> dict[str, float]:
        """BM25's fields and their weights: the window, the memory's own text and its tags."""
        return {"window": 1.0, "text": self.own_text_weight, "tags": self.tags_weight}

    @property
    def narrow_weight(self) -> float:
        """The weight of a memory's share inside a narrow window: more than any memory can score
        otherwise (a full keyword match of a named entity, the walk's 2 and its bridge, meaning in full,
        the time term), so a memory wholly inside outranks every memory outside."""
        return (
            self.keyword_weight * self.named_boost
            + 2
            + self.bridge_weight
            + self.meaning_weight
            + self.time_weight
        )

    def calibration(self, model: str | None) -> Calibration | None:
        """The calibration of `model` (None: embeddings off, or a model without one)."""
        return self.calibrations.get(model) if model else None
