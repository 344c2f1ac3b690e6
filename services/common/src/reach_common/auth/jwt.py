"""JWT bearer tokens: HS256 with a shared secret or RS256 with a public key.

The algorithm is chosen from what is configured, never from what the token
asks for alone: a token claiming ``none`` or an unconfigured algorithm is
refused. Issuer and audience are checked when configured (strict mode refuses to
start without them, see ``AuthSettings``); ``exp`` and ``sub``
are required.
"""

from __future__ import annotations

from typing import Any

import jwt as pyjwt

from reach_common.auth.caller import Caller, identity_problem
from reach_common.auth.errors import InvalidCredential


class JwtVerifier:
    def __init__(
        self,
        *,
        secret: str | None,
        public_key: str | None,
        issuer: str | None,
        audience: str | None,
        roles_claim: str,
    ) -> None:
        self._keys: dict[str, Any] = {}
        if secret:
            self._keys["HS256"] = secret
        if public_key:
            self._keys["RS256"] = public_key
        self._issuer = issuer
        self._audience = audience
        self._roles_claim = roles_claim

    def verify(self, token: str) -> Caller:
        if not self._keys:
            raise InvalidCredential("This service accepts no JWTs; use an API key.")
        try:
            algorithm = pyjwt.get_unverified_header(token).get("alg")
        except pyjwt.InvalidTokenError as exc:
            raise InvalidCredential("The bearer token is not a well-formed JWT.") from exc
        key = self._keys.get(str(algorithm))
        if key is None:
            allowed = ", ".join(sorted(self._keys))
            raise InvalidCredential(f"JWT algorithm {algorithm!r} is not accepted ({allowed}).")
        options: dict[str, Any] = {"require": ["exp", "sub"]}
        if self._issuer:
            options["require"].append("iss")
        if self._audience:
            options["require"].append("aud")
        try:
            claims = pyjwt.decode(
                token,
                key,
                algorithms=[str(algorithm)],
                issuer=self._issuer,
                audience=self._audience,
                options=options,  # type: ignore[arg-type]
            )
        except pyjwt.ExpiredSignatureError as exc:
            raise InvalidCredential("The JWT has expired.") from exc
        except pyjwt.InvalidIssuerError as exc:
            raise InvalidCredential(
                "The JWT was issued by an issuer this service does not trust."
            ) from exc
        except pyjwt.InvalidAudienceError as exc:
            raise InvalidCredential("The JWT is meant for another audience.") from exc
        except pyjwt.InvalidTokenError as exc:
            raise InvalidCredential(f"The JWT is not valid: {exc}.") from exc
        subject = str(claims["sub"])
        if (problem := identity_problem(subject)) is not None:
            raise InvalidCredential(f"The JWT's subject {problem}.")
        return Caller(user_id=subject, roles=self._roles(claims), via="jwt")

    def _roles(self, claims: dict[str, Any]) -> frozenset[str]:
        raw = claims.get(self._roles_claim, [])
        if isinstance(raw, str):
            roles = raw.split()
        elif isinstance(raw, list):
            roles = [str(r) for r in raw]
        else:
            return frozenset()
        # A role no identity check accepts (a control character, 200+ characters) names
        # no role anyone was granted: left out rather than stored or logged.
        return frozenset(r for r in roles if identity_problem(r) is None)
