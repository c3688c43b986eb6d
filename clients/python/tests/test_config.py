"""Settings from the environment, as the CLI reads them, and the HS256 helper against the real service."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from support import KID, SECRET, new_name, run

from artifact_store_client import ArtifactStoreClient, Scope, UnauthorizedError, mint_hs256_token


async def test_url_token_and_session_come_from_the_environment(
    connect: Any, service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = new_name("env")
    monkeypatch.setenv("ARTIFACT_STORE_URL", service.url + "/")
    monkeypatch.setenv("ARTIFACT_STORE_TOKEN", service.token(tenant))
    monkeypatch.setenv("ARTIFACT_STORE_SESSION", "s-from-env")
    client = connect(base_url=None, token=None)
    assert client.base_url == service.url
    assert client.scope == Scope(session="s-from-env")
    ref = await run(client.put(b"from the environment"))
    assert (ref.scope.tenant_id, ref.scope.session_id) == (tenant, "s-from-env")
    # An explicit scope wins over the environment's session.
    other = connect(base_url=None, token=None, scope={"session": "s-explicit", "trace": "tr"})
    ref = await run(other.put(b"explicit"))
    assert (ref.scope.session_id, ref.scope.trace_id) == ("s-explicit", "tr")


def test_the_default_url_is_the_local_service(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARTIFACT_STORE_URL", raising=False)
    with ArtifactStoreClient() as client:
        assert client.base_url == "http://127.0.0.1:8787"
    with pytest.raises(ValueError, match="http"):
        ArtifactStoreClient("ftp://example.com")


async def test_a_callable_token_is_asked_per_request(connect: Any, service: Any, is_async: bool) -> None:
    tenant = new_name("callable")
    calls = 0

    def token() -> str:
        nonlocal calls
        calls += 1
        return service.token(tenant)

    async def async_token() -> str:
        return token()

    client = connect(token=async_token if is_async else token)
    ref = await run(client.put(b"callable"))
    assert await run(client.exists(ref.id))
    assert calls == 2
    assert ref.scope.tenant_id == tenant


async def test_a_minted_token_is_accepted_and_binds_its_claims(connect: Any) -> None:
    token = mint_hs256_token(SECRET, kid=KID, tenant="minted", sub="u-1", session="s-1", trace="tr-1")
    ref = await run(connect(token=token).put(b"minted"))
    scope = ref.scope
    assert (scope.tenant_id, scope.user_id, scope.session_id, scope.trace_id) == ("minted", "u-1", "s-1", "tr-1")


async def test_a_token_minted_with_another_secret_is_refused(connect: Any) -> None:
    token = mint_hs256_token("not-the-secret", kid=KID, tenant="minted")
    with pytest.raises(UnauthorizedError):
        await run(connect(token=token).put(b"x"))


async def test_an_expired_token_is_refused(connect: Any) -> None:
    token = mint_hs256_token(SECRET, kid=KID, tenant="minted", ttl_seconds=-60)
    with pytest.raises(UnauthorizedError):
        await run(connect(token=token).list())


def test_a_minted_token_is_a_plain_hs256_jwt() -> None:
    token = mint_hs256_token(b"k" * 32, tenant="acme", perms=["read"], ttl_seconds=60)
    header, claims, signature = (
        json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))) if i < 2 else part
        for i, part in enumerate(token.split("."))
    )
    assert header == {"alg": "HS256", "typ": "JWT"}
    assert claims["tenant"] == "acme" and claims["perms"] == ["read"]
    assert claims["exp"] - claims["iat"] == 60
    assert "=" not in signature and "session" not in claims
