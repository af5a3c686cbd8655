"""Settings: the one place that reads the environment.

Variables are `GRAPHSVC_<SECTION>_<KEY>`, e.g. `GRAPHSVC_NEO4J_URI`, `GRAPHSVC_HTTP_PORT`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEV_NEO4J_PASSWORD = "graphsvc-dev"


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


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GRAPHSVC_", env_nested_delimiter="_", env_nested_max_split=1, extra="ignore")

    environment: Literal["development", "production"] = "development"
    neo4j: Neo4jSettings = Neo4jSettings()
    http: HttpSettings = HttpSettings()

    @model_validator(mode="after")
    def _no_default_secrets_outside_development(self) -> Settings:
        if self.environment != "development" and self.neo4j.password.get_secret_value() == DEV_NEO4J_PASSWORD:
            raise ValueError("GRAPHSVC_NEO4J_PASSWORD must be set outside development")
        return self
