"""A LangGraph agent with long-term memory in graphsvc, and no model: it remembers what the user says
about themselves and answers a question from what it recalls.

    GRAPHSVC_URL=http://127.0.0.1:8080 GRAPHSVC_TOKEN=gsk_... python examples/langgraph_agent.py

(`pip install 'graphsvc[langgraph]'`; `./run` prints the URL and a token.)
"""

from __future__ import annotations

import sys
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphsvc.integrations.langgraph import GraphsvcStore


class Turn(TypedDict):
    user: str
    said: str
    answer: str


def remember(state: Turn, runtime: Runtime[None]) -> dict[str, str]:
    """A statement ("I ...") is kept in the user's namespace, one item per turn."""
    assert runtime.store is not None
    if state["said"].lower().startswith("i "):
        items = runtime.store.search(("users", state["user"]), limit=1000)
        runtime.store.put(("users", state["user"]), f"fact-{len(items) + 1}", {"fact": state["said"]})
    return {}


def answer(state: Turn, runtime: Runtime[None]) -> dict[str, str]:
    """A question is answered with the best memory the store recalls for it."""
    assert runtime.store is not None
    if not state["said"].endswith("?"):
        return {"answer": "Noted."}
    found = runtime.store.search(("users", state["user"]), query=state["said"], limit=1)
    return {"answer": f"You told me: {found[0].value['fact']}" if found else "I don't know yet."}


def build(store: GraphsvcStore):
    graph = StateGraph(Turn)
    graph.add_node("remember", remember)
    graph.add_node("answer", answer)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "answer")
    graph.add_edge("answer", END)
    return graph.compile(store=store)


def main(user: str = "alice") -> None:
    store = GraphsvcStore(index={"dims": 0, "embed": "graphsvc", "fields": ["fact"]})
    agent = build(store)
    for said in ["I drink green tea every morning", "I live in Lisbon", "What do I drink in the morning?"]:
        print(f"> {said}\n{agent.invoke({'user': user, 'said': said, 'answer': ''})['answer']}")
    store.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
