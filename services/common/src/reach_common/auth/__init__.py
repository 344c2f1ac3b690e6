"""One auth kit for every Reach service.

The gateway, the agent and the retriever verify callers the same way: an API
key (``rk_<id>_<secret>``, stored hashed in ``auth.api_key``) or a JWT, sent as
``Authorization: Bearer …`` or ``X-API-Key``. ``AUTH_MODE=strict`` trusts only
those; ``AUTH_MODE=permissive`` (local development) also trusts the identity a
client claims (``user_context`` or ``X-User-Id`` / ``X-User-Roles``).

- :mod:`reach_common.auth.caller`: :class:`Caller`, the identity every decision is for;
- :mod:`reach_common.auth.authenticator`: :class:`Authenticator`, headers → caller;
- :mod:`reach_common.auth.keys`, :mod:`reach_common.auth.jwt`: the two verifiers;
- :mod:`reach_common.auth.settings`: ``AuthSettings``, the mixin every service composes.
"""
