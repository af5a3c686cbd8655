"""Runnable examples (tests/test_langgraph_store.py runs the agent)."""
