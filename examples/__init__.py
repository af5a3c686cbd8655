"""Runnable examples (tests/interfaces/client/test_langgraph_store.py runs the agent)."""
