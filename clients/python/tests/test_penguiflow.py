"""HttpArtifactStore as penguiflow sees it: its protocol, its refs, its puts and reads, and its tokens."""

from __future__ import annotations

import asyncio
import base64
import importlib
import inspect
import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pytest
from support import KID, SECRET, Service, new_name

from artifact_store_client import UnauthorizedError
from artifact_store_client.penguiflow import (
    ArtifactRef,
    ArtifactScope,
    HttpArtifactStore,
    TenantMismatchError,
    _models,
    token_minter,
)


@runtime_checkable
class ArtifactStore(Protocol):
    """penguiflow.artifacts.ArtifactStore, as penguiflow 3 declares it."""

    async def put_bytes(
        self,
        data: bytes,
        *,
        mime_type: str | None = None,
        filename: str | None = None,
        namespace: str | None = None,
        scope: Any = None,
        meta: dict[str, Any] | None = None,
    ) -> Any: ...

    async def put_text(
        self,
        text: str,
        *,
        mime_type: str = "text/plain",
        filename: str | None = None,
        namespace: str | None = None,
        scope: Any = None,
        meta: dict[str, Any] | None = None,
    ) -> Any: ...

    async def get(self, artifact_id: str) -> bytes | None: ...

    async def get_ref(self, artifact_id: str) -> Any: ...

    async def delete(self, artifact_id: str) -> bool: ...

    async def exists(self, artifact_id: str) -> bool: ...

    async def list(self, *, scope: Any = None) -> list[Any]: ...


METHODS = ["put_bytes", "put_text", "get", "get_ref", "delete", "exists", "list"]


@pytest.fixture
async def tenant_store(service: Service) -> AsyncIterator[tuple[HttpArtifactStore, str]]:
    """A store whose plain token is a tenant of its own, and that tenant's name."""
    tenant = new_name("pf")
    store = HttpArtifactStore(service.url, service.token(tenant))
    yield store, tenant
    await store.aclose()


def test_the_store_is_penguiflows_artifact_store() -> None:
    store = HttpArtifactStore("http://127.0.0.1:1", "token")
    assert isinstance(store, ArtifactStore)
    for name in METHODS:
        ours, theirs = getattr(HttpArtifactStore, name), getattr(ArtifactStore, name)
        assert inspect.iscoroutinefunction(ours), name
        shape = [(p.name, p.kind, p.default) for p in inspect.signature(ours).parameters.values()]
        expected = [(p.name, p.kind, p.default) for p in inspect.signature(theirs).parameters.values()]
        assert shape == expected, name


async def test_puts_and_reads_round_trip(tenant_store: tuple[HttpArtifactStore, str]) -> None:
    store, tenant = tenant_store
    scope = ArtifactScope(tenant_id=tenant, user_id="u-1", session_id="s-1", trace_id="t-1")

    empty = await store.put_bytes(b"", scope=scope)
    assert (empty.size_bytes, empty.mime_type, empty.namespace) == (0, "application/octet-stream", "art")
    assert await store.get(empty.id) == b""
    assert await store.exists(empty.id) is True

    text = "Grüße, 世界 ✓"
    named = await store.put_text(text, filename="résumé – 2024.txt", scope=scope)
    assert (named.filename, named.mime_type) == ("résumé – 2024.txt", "text/plain")
    assert named.size_bytes == len(text.encode())
    assert await store.get(named.id) == text.encode()

    meta = {"tool": "SearchTool", "args": {"q": "ü"}, "truncated": False}
    described = await store.put_text("{}", mime_type="application/json", namespace="observation.SearchTool", meta=meta)
    assert described.source == meta
    assert described.namespace == "observation.SearchTool"
    assert described.id.startswith("observation.SearchTool_")
    again = await store.get_ref(described.id)
    assert again is not None and again.source == meta

    assert named.scope == scope
    assert isinstance(named, ArtifactRef) and isinstance(named.scope, ArtifactScope)
    assert named.model_dump()["scope"] == {
        "tenant_id": tenant,
        "user_id": "u-1",
        "session_id": "s-1",
        "trace_id": "t-1",
    }
    assert "filename" not in empty.model_dump(exclude_none=True)


async def test_missing_reads_are_none_and_false(tenant_store: tuple[HttpArtifactStore, str]) -> None:
    store, _ = tenant_store
    assert await store.get("art_000000000000000000000000") is None
    assert await store.get_ref("art_000000000000000000000000") is None
    assert await store.exists("art_000000000000000000000000") is False
    assert await store.delete("art_000000000000000000000000") is False


async def test_an_id_the_service_would_refuse_reads_as_missing(tenant_store: tuple[HttpArtifactStore, str]) -> None:
    store, _ = tenant_store
    for bad in ["", "x" * 300, "art_../../etc/passwd", "art_0000 0000", "no-hash", "art_" + "g" * 24, "é_" + "0" * 24]:
        assert await store.get(bad) is None, bad
        assert await store.get_ref(bad) is None, bad
        assert await store.exists(bad) is False, bad
        assert await store.delete(bad) is False, bad


async def test_a_bound_or_filtered_scope_scopes_puts_that_name_none(service: Service) -> None:
    tenant = new_name("pf")
    # As penguiflow's InMemoryArtifactStore(scope_filter=…): `scope or scope_filter`.
    filtered = ArtifactScope(tenant_id=tenant, user_id="u-f", session_id="s-f")
    async with HttpArtifactStore(service.url, service.token(tenant), scope_filter=filtered) as store:
        ref = await store.put_text("filtered")
        assert ref.scope == filtered
        named = await store.put_text("named", scope={"tenant_id": tenant, "session_id": "s-other"})
        assert named.scope == ArtifactScope(tenant_id=tenant, session_id="s-other")
        assert await store.get(ref.id) == b"filtered"
        bound = ArtifactScope(tenant_id=tenant, user_id="u-b", session_id="s-b")
        with store.bind(bound):
            inside = await store.put_text("bound")
            assert inside.scope == bound
            assert await store.get(inside.id) == b"bound"
            # The bound session reads its own references only.
            assert await store.get(ref.id) is None
        assert await store.get(inside.id) is None


async def test_other_errors_are_raised(service: Service) -> None:
    async with HttpArtifactStore(service.url, "not-a-token") as store:
        with pytest.raises(UnauthorizedError):
            await store.get("art_000000000000000000000000")


async def test_list_takes_any_scope_and_filters_by_it(tenant_store: tuple[HttpArtifactStore, str]) -> None:
    store, tenant = tenant_store
    a = await store.put_text("a", scope={"tenant_id": tenant, "session_id": "s-a", "user_id": "u-1"})
    b = await store.put_text("b", scope={"tenant_id": tenant, "session_id": "s-b", "user_id": "u-1"})

    class Plain:
        tenant_id: str | None = tenant
        user_id: str | None = None
        session_id: str | None = "s-a"
        trace_id: str | None = None

    assert [ref.id for ref in await store.list(scope=Plain())] == [a.id]
    assert {ref.id for ref in await store.list(scope=ArtifactScope(user_id="u-1"))} == {a.id, b.id}
    assert {ref.id for ref in await store.list()} == {a.id, b.id}
    with pytest.raises(ValueError, match="session"):
        await store.list(scope={"session": "s-a"})


async def test_a_plain_token_refuses_a_scope_of_another_tenant(
    tenant_store: tuple[HttpArtifactStore, str],
) -> None:
    store, tenant = tenant_store
    with pytest.raises(TenantMismatchError, match="token callable that mints one per tenant") as refused:
        await store.put_bytes(b"for someone else", scope={"tenant_id": "another", "session_id": "s-1"})
    assert repr(tenant) in str(refused.value) and "'another'" in str(refused.value)
    # Nothing was left in the token's tenant.
    assert await store.list() == []

    await store.put_bytes(b"mine", scope={"tenant_id": tenant, "session_id": "s-1"})
    with pytest.raises(TenantMismatchError):
        await store.list(scope={"tenant_id": "another"})

    # A reference that names nothing narrower than the tenant is kept, and the error says so: only an
    # unnarrowed delete could reach it, and that would take the other references to those bytes too.
    with pytest.raises(TenantMismatchError, match="left to expire"):
        await store.put_bytes(b"mine", scope={"tenant_id": "another"})
    assert len(await store.list()) == 2


async def test_the_token_callable_is_asked_with_each_calls_scope(service: Service) -> None:
    token = service.token()
    asked: list[Any] = []

    async def mint(scope: Any) -> str:
        asked.append(scope)
        return token

    async with HttpArtifactStore(service.url, mint) as store:
        put_scope = ArtifactScope(user_id="u-1", session_id="s-1", trace_id="t-1")
        ref = await store.put_text("asked", scope={"user_id": "u-1", "session_id": "s-1", "trace_id": "t-1"})
        assert asked == [put_scope]

        asked.clear()
        await store.list(scope=ArtifactScope(session_id="s-1"))
        assert asked == [ArtifactScope(session_id="s-1")]

        asked.clear()
        assert await store.get_ref(ref.id) is not None
        assert await store.exists(ref.id)
        assert asked == [None, None]

        asked.clear()
        bound = ArtifactScope(user_id="u-1", session_id="s-1")
        with store.bind(bound):
            assert await store.get(ref.id) == b"asked"
            assert await store.get_ref(ref.id) is not None
            assert await store.exists(ref.id)
            assert await store.delete(ref.id)
        assert asked == [bound] * 4


async def test_a_minter_serves_many_tenants_from_one_store(service: Service) -> None:
    x, y = new_name("x"), new_name("y")
    async with HttpArtifactStore(service.url, token_minter(SECRET, kid=KID)) as store:
        # Concurrent calls for two tenants: each call's token is its own tenant's.
        puts = [
            store.put_text(f"{tenant} {i}", scope={"tenant_id": tenant, "session_id": "s"})
            for i in range(8)
            for tenant in (x, y)
        ]
        refs = await asyncio.gather(*puts)
        assert [ref.scope and ref.scope.tenant_id for ref in refs] == [x, y] * 8

        secret_of_y = await store.put_text("y only", scope=ArtifactScope(tenant_id=y, session_id="s"))
        with store.bind(ArtifactScope(tenant_id=x)):
            assert await store.get_ref(secret_of_y.id) is None
            assert await store.get(secret_of_y.id) is None
        with store.bind(ArtifactScope(tenant_id=y)):
            assert await store.get(secret_of_y.id) == b"y only"
        assert {ref.scope and ref.scope.tenant_id for ref in await store.list(scope={"tenant_id": x})} == {x}
        # Unbound reads name no tenant, and this minter was given no default one.
        with pytest.raises(ValueError, match="names no tenant"):
            await store.get_ref(secret_of_y.id)


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


def test_a_minter_reuses_its_tokens_until_shortly_before_they_expire(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    mint = token_minter("secret", kid="k", tenant="fallback", ttl_seconds=300)

    first = mint({"tenant_id": "acme", "user_id": "u-1", "session_id": "s-1"})
    assert claims_of(first)["tenant"] == "acme" and claims_of(first)["sub"] == "u-1"
    assert "session" not in claims_of(first)
    assert mint(ArtifactScope(tenant_id="acme", user_id="u-1", session_id="s-2")) == first
    assert claims_of(mint(None))["tenant"] == "fallback"
    assert claims_of(mint(ArtifactScope(tenant_id="acme")))["tenant"] == "acme"

    now[0] += 239
    assert mint({"tenant_id": "acme", "user_id": "u-1"}) == first
    now[0] += 2
    renewed = mint({"tenant_id": "acme", "user_id": "u-1"})
    assert renewed != first and claims_of(renewed)["exp"] == int(now[0]) + 300

    with pytest.raises(ValueError, match="names no tenant"):
        token_minter("secret")(None)


FAKE_PENGUIFLOW = '''
from dataclasses import dataclass, field
from typing import Any


@dataclass(kw_only=True)
class ArtifactScope:
    tenant_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    trace_id: str | None = None


@dataclass(kw_only=True)
class ArtifactRef:
    id: str
    mime_type: str | None = None
    size_bytes: int | None = None
    filename: str | None = None
    sha256: str | None = None
    scope: ArtifactScope | None = None
    namespace: str | None = None
    source: dict[str, Any] = field(default_factory=dict)
'''


@pytest.fixture
def fake_penguiflow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A `penguiflow.artifacts` on sys.path, found by the store's first lookup after it appears."""
    package = tmp_path / "penguiflow"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "artifacts.py").write_text(FAKE_PENGUIFLOW)
    monkeypatch.syspath_prepend(str(tmp_path))
    _models.cache_clear()
    yield importlib.import_module("penguiflow.artifacts")
    for name in ("penguiflow.artifacts", "penguiflow"):
        sys.modules.pop(name, None)
    _models.cache_clear()


async def test_refs_are_penguiflows_own_where_it_is_installed(
    fake_penguiflow: Any, tenant_store: tuple[HttpArtifactStore, str], service: Service
) -> None:
    store, tenant = tenant_store
    asked: list[Any] = []
    ref = await store.put_text("typed", scope={"tenant_id": tenant, "session_id": "s-1"})
    assert type(ref) is fake_penguiflow.ArtifactRef
    assert type(ref.scope) is fake_penguiflow.ArtifactScope
    assert ref.scope == fake_penguiflow.ArtifactScope(tenant_id=tenant, session_id="s-1")

    listed = await store.list(scope=fake_penguiflow.ArtifactScope(tenant_id=tenant))
    assert [type(item) for item in listed] == [fake_penguiflow.ArtifactRef]
    with store.bind(ArtifactScope(tenant_id=tenant, session_id="s-1")):
        found = await store.get_ref(ref.id)
    assert type(found) is fake_penguiflow.ArtifactRef

    def mint(scope: Any) -> str:
        asked.append(scope)
        return service.token(tenant)

    async with HttpArtifactStore(service.url, mint) as minting:
        with minting.bind({"tenant_id": tenant, "session_id": "s-1"}):
            assert await minting.exists(ref.id)
    assert type(asked[0]) is fake_penguiflow.ArtifactScope


async def test_refs_are_this_modules_without_penguiflow(tenant_store: tuple[HttpArtifactStore, str]) -> None:
    store, _ = tenant_store
    assert "penguiflow" not in sys.modules
    ref = await store.put_text("plain")
    assert type(ref) is ArtifactRef and type(ref.scope) is ArtifactScope
