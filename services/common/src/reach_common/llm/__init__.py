"""LLM providers behind one interface: Anthropic, OpenAI (and OpenAI-compatible), or none.

- ``types``: vendor-neutral messages, tool specs, completions, stream events,
  and the ``LLMProvider`` protocol;
- ``factory.create_provider(settings)``: the configured provider, or ``None``
  in offline mode (no key configured): callers then route with embeddings and
  tool schemas. ``factory.check_settings`` fails fast at startup;
- ``anthropic`` / ``openai``: the providers, each owning its vendor's wire rules;
- ``errors``: the ``LLMError`` taxonomy (retryable vs terminal), mapped once
  from the SDKs' exceptions;
- ``history.repair``: make any stored history provider-valid.

Importing this package loads no SDK; the providers load theirs when built.
"""
