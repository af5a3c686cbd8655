"""Settings: the one place that reads the environment.

Variables are `GRAPHSVC_<SECTION>_<KEY>`, e.g. `GRAPHSVC_NEO4J_URI`, `GRAPHSVC_HTTP_PORT`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, get_args

from pydantic import AliasChoices, BaseModel, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graphsvc.domain.recall_config import RecallConfig

DEV_NEO4J_PASSWORD = "graphsvc-dev"
# Anchoring's defaults, here once: ChainSettings and AnchoringService both take them from here.
RECEIPT_TIMEOUT_S = 60.0
FINALITY_TIMEOUT_S = 30.0
LEASE_TTL_S = 15.0
CACHE_DIR = Path.home() / ".cache" / "graphsvc"


class Neo4jSettings(BaseModel):
    uri: str = "bolt://127.0.0.1:7687"
    user: str = "neo4j"
    password: SecretStr = SecretStr(DEV_NEO4J_PASSWORD)
    database: str = "neo4j"
    max_connection_pool_size: int = Field(default=50, ge=1)


class HttpSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Extra Host values accepted by the MCP transports (e.g. 'graphsvc:*' behind compose).",
    )


CHAIN_PRESETS = {
    # name: (chain id, transaction link)
    "monad-testnet": (10143, "https://testnet.monadscan.com/tx/{hash}"),
    "monad-mainnet": (143, "https://monadscan.com/tx/{hash}"),
    "local": (31337, None),
}


class ChainSettings(BaseModel):
    network: Literal["monad-testnet", "monad-mainnet", "local"] = "monad-testnet"
    rpc_url: str | None = None
    contract: str | None = None
    private_key: SecretStr | None = None
    explorer_tx_url: str | None = Field(default=None, description="Overrides the preset's, with {hash}")
    receipt_timeout_s: float = Field(default=RECEIPT_TIMEOUT_S, gt=0)
    finality_timeout_s: float = Field(
        default=FINALITY_TIMEOUT_S, ge=0, description="anchor_now waits this long for its batch to be final"
    )
    lease_ttl_s: float = Field(
        default=LEASE_TTL_S, gt=0, description="The anchoring lease, renewed every third of it while held"
    )
    auto_interval_s: float = Field(default=0, ge=0, description="Anchor every N seconds (0: off)")
    auto_pending: int = Field(default=0, ge=0, description="Anchor once N memories are pending (0: off)")

    @property
    def configured(self) -> bool:
        return bool(self.rpc_url and self.contract)

    @property
    def chain_id(self) -> int:
        return CHAIN_PRESETS[self.network][0]

    def explorer_url(self, tx_hash: str) -> str | None:
        template = self.explorer_tx_url or CHAIN_PRESETS[self.network][1]
        return template.format(hash=tx_hash) if template else None


EmbeddingModel = Literal["bge-small-en-v1.5", "all-MiniLM-L6-v2"]


class EmbeddingsSettings(BaseModel):
    enabled: bool = Field(
        default=True,
        description="Recall's semantic signal (meaning beyond shared words); false turns it off, see README",
    )
    model: EmbeddingModel | None = Field(
        default=None,
        description="The sentence model: bge-small-en-v1.5 (fetched once from Maven Central into cache_dir) "
        "or all-MiniLM-L6-v2 (packaged, no download). Unset: bge-small-en-v1.5, or all-MiniLM-L6-v2 while "
        "bge-small-en-v1.5 cannot be fetched; see README",
    )
    maven_url: str = Field(
        default="https://repo1.maven.org/maven2", description="Where bge-small-en-v1.5's jar is fetched from"
    )
    model_path: Path | None = Field(
        default=None, description="An ONNX file of the model instead of the pinned one"
    )
    tokenizer_path: Path | None = Field(
        default=None, description="Its tokenizer.json instead of the pinned one"
    )
    interval_s: float = Field(
        default=1.0, gt=0, description="How often an idle worker looks for new memories"
    )
    behind_s: float = Field(
        default=60.0,
        gt=0,
        description="/health names the worker behind when a memory it claims waited longer than this "
        "(docs/operations.md)",
    )


class ExtractionSettings(BaseModel):
    enabled: bool = Field(
        default=True,
        description="Entities and key phrases read from each memory's text in the background, joining "
        "memories through what they name (docs/extraction.md); false turns it off",
    )
    extractor: Literal["rules", "spacy"] = Field(
        default="rules",
        description="rules (no model, the default: bench/README.md, Extraction) or spacy (spaCy's "
        "en_core_web_sm, typed names; pip install 'graphsvc[spacy]')",
    )
    model_path: Path | None = Field(
        default=None, description="spacy: a model folder of your own instead of the pinned one"
    )
    interval_s: float = Field(
        default=1.0, gt=0, description="How often an idle extraction worker looks for new memories"
    )
    behind_s: float = Field(
        default=60.0,
        gt=0,
        description="/health names the worker behind when a memory it claims waited longer than this "
        "(docs/operations.md)",
    )


class AuthSettings(BaseModel):
    required: bool | None = Field(
        default=None,
        description="Require a bearer token on every tool call. Unset: required once any token exists.",
    )


class LogSettings(BaseModel):
    format: Literal["json", "plain"] | None = Field(
        default=None, description="Unset: JSON for `graphsvc serve` (and compose), plain for `graphsvc up`"
    )
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="graphsvc's own lines (INFO: one a request); libraries log from WARNING"
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="GRAPHSVC_", env_nested_delimiter="_", env_nested_max_split=1, extra="ignore"
    )

    environment: Literal["development", "production"] = "development"
    deadline_s: float = Field(
        default=10, gt=0, description="How long a request waits for Neo4j or the chain before a 503"
    )
    write_budget_s: float = Field(
        default=1.0,
        ge=0,
        description="How long a remember (store_event, a small batch) waits, from its arrival, for its "
        "memory's vector and links to write them with it; past it they are left to the background "
        "workers and the receipt says pending. 0: every write leaves them to the workers",
    )
    neo4j: Neo4jSettings = Neo4jSettings()
    http: HttpSettings = HttpSettings()
    chain: ChainSettings = ChainSettings()
    auth: AuthSettings = AuthSettings()
    log: LogSettings = LogSettings()
    embeddings: EmbeddingsSettings = EmbeddingsSettings()
    recall: RecallConfig = RecallConfig()
    extraction: ExtractionSettings = ExtractionSettings()
    cache_dir: Path = Field(default=CACHE_DIR, description="Where `graphsvc up` keeps the Neo4j it downloads")
    token: SecretStr | None = Field(
        default=None,
        description="A client's bearer token (gsk_...): `graphsvc mcp` calls with it, in process or via --url",
    )
    # The seed's names, accepted as they are.
    monad_rpc_url: str | None = Field(default=None, validation_alias=AliasChoices("MONAD_RPC_URL"))
    anchor_contract: str | None = Field(default=None, validation_alias=AliasChoices("ANCHOR_CONTRACT"))

    @classmethod
    def load(cls, stack: Path | None = None) -> Settings:
        """The environment's settings; where it names no Neo4j URI or no chain, those that `graphsvc
        up` recorded for the local stack it runs (`stack`, a JSON file), so the CLI reaches it."""
        settings = cls()
        if stack is None or not stack.is_file():
            return settings
        recorded = json.loads(stack.read_text())
        if not settings.neo4j_named and "neo4j" in recorded:
            settings.neo4j = settings.neo4j.model_copy(update=recorded["neo4j"])
        if not settings.chain.configured and "chain" in recorded:
            settings.chain = ChainSettings.model_validate(recorded["chain"])
        return settings

    @property
    def neo4j_named(self) -> bool:
        """The environment names a Neo4j (GRAPHSVC_NEO4J_URI): `graphsvc up` starts none of its own."""
        return bool(self.neo4j.uri) and "uri" in self.neo4j.model_fields_set

    @model_validator(mode="after")
    def _seed_chain_names(self) -> Settings:
        self.chain.rpc_url = self.chain.rpc_url or self.monad_rpc_url
        self.chain.contract = self.chain.contract or self.anchor_contract
        return self

    @model_validator(mode="after")
    def _every_model_calibrated(self) -> Settings:
        if missing := [m for m in get_args(EmbeddingModel) if m not in self.recall.calibrations]:
            raise ValueError(f"GRAPHSVC_RECALL_CALIBRATIONS has no calibration for {', '.join(missing)}")
        return self

    @model_validator(mode="after")
    def _no_default_secrets_outside_development(self) -> Settings:
        if self.environment != "development" and self.neo4j.password.get_secret_value() == DEV_NEO4J_PASSWORD:
            raise ValueError("GRAPHSVC_NEO4J_PASSWORD must be set outside development")
        return self
