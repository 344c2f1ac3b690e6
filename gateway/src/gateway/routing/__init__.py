"""Routing: natural language to the right tool.

Embedding and BM25 coarse stage, optional LLM re-rank, route cache and session context.
"""
