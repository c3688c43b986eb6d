"""HS256 tokens for hosts that hold one of the service's signing secrets (ARTIFACT_STORE_JWT_SECRETS)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterable

__all__ = ["mint_hs256_token"]


def mint_hs256_token(
    secret: str | bytes,
    *,
    tenant: str,
    sub: str | None = None,
    session: str | None = None,
    trace: str | None = None,
    perms: Iterable[str] = ("read", "write"),
    ttl_seconds: int = 3600,
    kid: str | None = None,
) -> str:
    """A JWT the service accepts when `secret` (text is taken as its UTF-8 bytes) is configured under `kid`.

    A token with `session` is bound to that session: it sees and stores only the session's references.
    """
    now = int(time.time())
    header: dict[str, object] = {"alg": "HS256", "typ": "JWT", **({"kid": kid} if kid is not None else {})}
    claims: dict[str, object] = {"tenant": tenant, "perms": list(perms), "iat": now, "exp": now + ttl_seconds}
    for name, value in (("sub", sub), ("session", session), ("trace", trace)):
        if value is not None:
            claims[name] = value
    signing_input = f"{_b64url_json(header)}.{_b64url_json(claims)}"
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    signature = hmac.new(key, signing_input.encode("ascii"), hashlib.sha256).digest()
    return f"{signing_input}.{_b64url(signature)}"


def _b64url_json(value: dict[str, object]) -> str:
    return _b64url(json.dumps(value, separators=(",", ":")).encode("utf-8"))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
