"""LLM providers behind one interface: Anthropic, OpenAI (and OpenAI-compatible), or none.

``create_provider(settings)`` returns a provider, or ``None`` in offline mode
(no key configured): callers then route with embeddings and tool schemas.
"""
