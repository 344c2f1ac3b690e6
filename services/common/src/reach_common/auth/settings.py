"""``AuthSettings``: how every service verifies its callers (one mixin, one meaning)."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings


class AuthSettings(BaseSettings):
    auth_mode: Literal["permissive", "strict"] = Field(
        "permissive",
        description=(
            "'permissive' (local development) also trusts the identity a client claims "
            "(user_context, X-User-Id / X-User-Roles); 'strict' takes the caller only from a "
            "verified API key or JWT."
        ),
    )
    jwt_secret: SecretStr | None = Field(None, description="HS256 shared secret for JWTs.")
    jwt_public_key: str | None = Field(None, description="PEM public key for RS256 JWTs.")
    jwt_issuer: str | None = Field(
        None, description="Required `iss` of JWTs (strict mode needs it when JWTs are enabled)."
    )
    jwt_audience: str | None = Field(
        None, description="Required `aud` of JWTs (strict mode needs it when JWTs are enabled)."
    )
    jwt_roles_claim: str = Field("roles", description="JWT claim holding the caller's roles.")
    api_key_cache_ttl_s: float = Field(
        30.0,
        ge=0,
        description="How long a verified API key is trusted before it is looked up again.",
    )

    @property
    def jwt_enabled(self) -> bool:
        return bool(self.jwt_secret or self.jwt_public_key)

    @model_validator(mode="after")
    def _strict_jwts_name_issuer_and_audience(self) -> Self:
        # Without both, a token minted for another service by the same issuer (or any
        # issuer holding the key) would be accepted here.
        if self.auth_mode == "strict" and self.jwt_enabled:
            missing = [
                name
                for name, value in (
                    ("JWT_ISSUER", self.jwt_issuer),
                    ("JWT_AUDIENCE", self.jwt_audience),
                )
                if not value
            ]
            if missing:
                raise ValueError(
                    f"AUTH_MODE=strict with JWTs enabled needs {' and '.join(missing)}: "
                    "set the issuer and audience tokens must carry."
                )
        return self
