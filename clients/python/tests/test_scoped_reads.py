"""Reads narrowed to a session, trace or user: a tenant-wide token sees only what that scope holds."""

from __future__ import annotations

from typing import Any

import pytest
from support import opened, run

from artifact_store_client import NotFoundError, Scope


async def test_reads_named_for_another_session_find_nothing(client: Any) -> None:
    ref = await run(client.put(b"only in s-a", session="s-a"))
    assert await run(client.get(ref.id, session="s-b")) is None
    assert await run(client.meta(ref.id, session="s-b")) is None
    assert await run(client.exists(ref.id, session="s-b")) is False
    with pytest.raises(NotFoundError):
        async with opened(client.stream(ref.id, session="s-b")):
            pass
    with pytest.raises(NotFoundError):
        await run(client.url(ref.id, session="s-b"))
    assert await run(client.delete(ref.id, session="s-b")) is False
    # Still there for its own session.
    assert await run(client.get(ref.id, session="s-a")) == b"only in s-a"
    meta = await run(client.meta(ref.id, session="s-a"))
    assert meta is not None and meta.scope.session_id == "s-a"
    assert await run(client.delete(ref.id, session="s-a")) is True


async def test_reads_narrow_by_trace_and_user_too(client: Any) -> None:
    ref = await run(client.put(b"traced", trace="tr-1", user="u-1"))
    assert await run(client.exists(ref.id, trace="tr-2")) is False
    assert await run(client.exists(ref.id, user="u-2")) is False
    assert await run(client.exists(ref.id, trace="tr-1", user="u-1")) is True


async def test_the_clients_scope_narrows_its_reads(connect: Any, service: Any) -> None:
    token = service.token()
    writer = connect(token=token, scope=Scope(session="s-a"))
    ref = await run(writer.put(b"written in s-a"))
    assert ref.scope.session_id == "s-a"
    elsewhere = connect(token=token, scope=Scope(session="s-b"))
    assert await run(elsewhere.get(ref.id)) is None
    assert await run(elsewhere.exists(ref.id)) is False
    # A call's own session wins over the client's.
    assert await run(elsewhere.get(ref.id, session="s-a")) == b"written in s-a"
