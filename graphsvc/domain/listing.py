"""Listing a graph's memories by their tags, and its tags, page by page: what a key-value view of the
graph needs (graphsvc.integrations.langgraph: a namespace is a tag path, an item its current memory).

Tags read as paths: `users/alice` is beneath `users`, so `under` selects a tag and every tag beneath it.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from graphsvc.domain.models import DEFAULT_GRAPH, ContractInput, ContractOutput, Graph, MemoryId, Tag

PAGE_MAX = 1000
OFFSET_MAX = 1_000_000


class ListMemoriesInput(ContractInput):
    tags: list[Tag] = Field(
        default_factory=list, max_length=32, description="Memories holding every one of these tags"
    )
    under: Tag | None = Field(
        default=None, description="Memories holding this tag or one beneath it (`a/b` is beneath `a`)"
    )
    ids: list[MemoryId] = Field(default_factory=list, max_length=PAGE_MAX, description="Only these memories")
    current: bool = Field(
        default=True, description="Only memories that none supersedes and whose validity has not ended"
    )
    limit: int = Field(default=100, ge=1, le=PAGE_MAX)
    offset: int = Field(default=0, ge=0, le=OFFSET_MAX, description="Memories to skip (newest first)")
    graph: Graph = DEFAULT_GRAPH


class ListedMemory(ContractOutput):
    id: str
    text: str
    tags: list[str]
    createdAt: str
    supersedes: list[str] = Field(default_factory=list, description="The memories this one replaces")
    data: dict[str, Any] | None = Field(
        default=None, exclude_if=lambda v: v is None, description="The data remembered with it, if any"
    )


class ListMemoriesResult(ContractOutput):
    memories: list[ListedMemory] = Field(description="Newest first")
    total: int = Field(description="How many memories match, over every page")


class ListTagsInput(ContractInput):
    under: Tag | None = Field(default=None, description="Only this tag and the tags beneath it")
    limit: int = Field(default=100, ge=1, le=PAGE_MAX)
    offset: int = Field(default=0, ge=0, le=OFFSET_MAX, description="Tags to skip (in order)")
    graph: Graph = DEFAULT_GRAPH


class TagCount(ContractOutput):
    tag: str
    memories: int = Field(description="Memories holding it")


class ListTagsResult(ContractOutput):
    tags: list[TagCount] = Field(description="In order of the tag")
    total: int = Field(description="How many tags match, over every page")
