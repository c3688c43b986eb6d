"""A scripted planner loop over HttpArtifactStore: two sessions of one tenant, each turn bound to its session.

ScopedArtifacts below does what penguiflow's tool-facing facade does with a store: uploads carry its
scope, and every read asks get_ref first and refuses a ref of another tenant, user or session.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from support import Service, new_name

from artifact_store_client.penguiflow import ArtifactRef, ArtifactScope, HttpArtifactStore


@dataclass
class ScopedArtifacts:
    store: HttpArtifactStore
    tenant_id: str | None
    user_id: str | None
    session_id: str | None
    trace_id: str | None

    @property
    def scope(self) -> ArtifactScope:
        return ArtifactScope(self.tenant_id, self.user_id, self.session_id, self.trace_id)

    async def upload(
        self,
        data: bytes | str,
        *,
        mime_type: str | None = None,
        filename: str | None = None,
        namespace: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> ArtifactRef:
        if isinstance(data, str):
            text_type = mime_type or "text/plain"
            return await self.store.put_text(
                data, mime_type=text_type, filename=filename, namespace=namespace, scope=self.scope, meta=meta
            )
        return await self.store.put_bytes(
            data, mime_type=mime_type, filename=filename, namespace=namespace, scope=self.scope, meta=meta
        )

    async def download(self, artifact_id: str) -> bytes | None:
        if await self._allowed(artifact_id) is None:
            return None
        return await self.store.get(artifact_id)

    async def get_metadata(self, artifact_id: str) -> ArtifactRef | None:
        return await self._allowed(artifact_id)

    async def exists(self, artifact_id: str) -> bool:
        return await self._allowed(artifact_id) is not None

    async def delete(self, artifact_id: str) -> bool:
        if await self._allowed(artifact_id) is None:
            return False
        return await self.store.delete(artifact_id)

    async def list(self) -> list[ArtifactRef]:
        return await self.store.list(scope=ArtifactScope(self.tenant_id, self.user_id, self.session_id, None))

    async def _allowed(self, artifact_id: str) -> ArtifactRef | None:
        ref = await self.store.get_ref(artifact_id)
        return ref if ref is not None and self._check_scope(ref) else None

    def _check_scope(self, ref: ArtifactRef) -> bool:
        if ref.scope is None:
            return True
        for part in ("tenant_id", "user_id", "session_id"):
            mine, theirs = getattr(self, part), getattr(ref.scope, part)
            if mine is not None and theirs is not None and mine != theirs:
                return False
        return True


@dataclass
class Session:
    """One conversation the host serves: its planner runs are bound to it."""

    store: HttpArtifactStore
    scope: ArtifactScope

    def tools(self) -> ScopedArtifacts:
        s = self.scope
        return ScopedArtifacts(self.store, s.tenant_id, s.user_id, s.session_id, s.trace_id)

    def turn(self) -> Any:
        # penguiflow's read checks leave the trace out; a binding names the session and user.
        return self.store.bind(ArtifactScope(self.scope.tenant_id, self.scope.user_id, self.scope.session_id))


def search_tool(query: str) -> str:
    """An observation far over any guardrail: ~200 KB of JSON."""
    hits = [{"rank": i, "title": f"{query} #{i}", "snippet": "x" * 180} for i in range(1000)]
    return json.dumps({"query": query, "hits": hits})


# penguiflow's ObservationGuardrailConfig.auto_artifact_threshold.
AUTO_ARTIFACT_CHARS = 20_000


async def observe(tools: ScopedArtifacts, tool_name: str, output: str) -> str:
    """What the model reads of a tool's output: the output, or a ref to it once it is too large."""
    if len(output) <= AUTO_ARTIFACT_CHARS:
        return output
    ref = await tools.upload(
        output, mime_type="application/json", namespace=f"observation.{tool_name}", meta={"tool": tool_name}
    )
    return json.dumps({"artifact": ref.id, "size_bytes": ref.size_bytes})


PAGE = b"<html><body>the same page, fetched by both sessions</body></html>"


@pytest.fixture
async def sessions(service: Service) -> AsyncIterator[tuple[Session, Session]]:
    tenant = new_name("pf")
    async with HttpArtifactStore(service.url, service.token(tenant)) as store:
        yield (
            Session(store, ArtifactScope(tenant, "u-a", "s-a", "tr-a1")),
            Session(store, ArtifactScope(tenant, "u-b", "s-b", "tr-b1")),
        )


async def test_sessions_keep_to_their_own_artifacts(sessions: tuple[Session, Session]) -> None:
    a, b = sessions
    store = a.store

    # A: the search observation is too large for the context, so the loop stores it and keeps the ref.
    observation = search_tool("quarterly sales")
    assert len(observation) > 200_000
    with a.turn():
        seen = json.loads(await observe(a.tools(), "SearchTool", observation))
        assert seen["size_bytes"] == len(observation)
        stored = await a.tools().get_metadata(seen["artifact"])
        assert stored is not None and stored.id.startswith("observation.SearchTool_")
        assert stored.source == {"tool": "SearchTool"}
        assert await a.tools().download(stored.id) == observation.encode()

    # B learns the id (a leaked prompt, a guess) and is refused every way.
    with b.turn():
        assert await b.tools().download(stored.id) is None
        assert await b.tools().get_metadata(stored.id) is None
        assert await b.tools().exists(stored.id) is False
        assert await b.tools().delete(stored.id) is False
        assert await b.tools().list() == []
    # Unbound too: the service answers A's reference, and the facade's own check refuses it.
    assert await b.tools().download(stored.id) is None
    with a.turn():
        assert await a.tools().exists(stored.id) is True
        assert [ref.id for ref in await a.tools().list()] == [stored.id]

    # Both fetch the same page: one id, one reference each, each with its own description.
    with a.turn():
        page_a = await a.tools().upload(
            PAGE, mime_type="text/html", filename="a.html", namespace="tool_artifact.Fetch.body", meta={"by": "a"}
        )
    with b.turn():
        page_b = await b.tools().upload(
            PAGE, mime_type="text/html", filename="b.html", namespace="tool_artifact.Fetch.body", meta={"by": "b"}
        )
    assert page_a.id == page_b.id

    async def describe(session: Session) -> tuple[str | None, dict[str, Any], bytes | None]:
        with session.turn():
            await asyncio.sleep(0)
            ref = await session.tools().get_metadata(page_a.id)
            assert ref is not None
            return ref.filename, ref.source, await session.tools().download(page_a.id)

    # Concurrent runs, each in its own binding.
    seen_a, seen_b = await asyncio.gather(describe(a), describe(b))
    assert seen_a == ("a.html", {"by": "a"}, PAGE)
    assert seen_b == ("b.html", {"by": "b"}, PAGE)

    # Unbound, a read answers the newest reference: B's. penguiflow's in-memory store would answer A's.
    newest = await store.get_ref(page_a.id)
    assert newest is not None and newest.scope is not None
    assert (newest.filename, newest.scope.session_id) == ("b.html", "s-b")

    # B deletes its reference; A's stays.
    with b.turn():
        assert await b.tools().delete(page_b.id) is True
        assert await b.tools().exists(page_b.id) is False
        assert await b.tools().download(page_b.id) is None
    with a.turn():
        assert await a.tools().download(page_a.id) == PAGE
        kept = await a.tools().get_metadata(page_a.id)
        assert kept is not None and kept.filename == "a.html"
