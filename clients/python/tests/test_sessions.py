"""Ending a session: everything it holds goes at once, named versions with their names; the answer
says what went; who may end which session; retried like a delete."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from support import new_name, run

from artifact_store_client import BadRequestError, ForbiddenError, Scope, SessionEnd
from test_retries import Recorder, busy, mock


async def test_ending_a_session_removes_what_it_holds_and_says_what_went(connect: Any, service: Any) -> None:
    token = service.token(sub="u-1")
    client = connect(token=token, scope=Scope(session="s-a"))
    first = await run(client.put(b"first of s-a"))
    second = await run(client.put("second, as text", trace="tr-1"))
    v0 = await run(client.save_version("app", "notes.md", "draft"))
    v1 = await run(client.save_version("app", "notes.md", "final"))
    await run(client.save_version("app", "profile.json", b"{}", user_wide=True))
    elsewhere = await run(client.put(b"first of s-a", session="s-b"))

    report = await run(client.end_session())
    assert report == SessionEnd(
        session_id="s-a",
        refs=4,
        bytes=first.size_bytes + second.size_bytes + v0.size_bytes + v1.size_bytes,
        versions=2,
    )
    assert await run(client.get(first.id)) is None
    assert (await run(client.list())).items == []
    assert await run(client.load_version("app", "notes.md")) is None
    # The user-wide name and another session's reference to the same bytes stay.
    kept = await run(client.load_version("app", "profile.json", user_wide=True))
    assert kept is not None and kept.data == b"{}"
    assert await run(client.get(elsewhere.id, session="s-b")) == b"first of s-a"

    # Ending it again finds nothing; a later save of the name starts again at 0.
    assert await run(client.end_session("s-a")) == SessionEnd("s-a", 0, 0, 0)
    assert (await run(client.save_version("app", "notes.md", "again"))).version == 0


async def test_a_session_bound_token_ends_its_own_session_only(connect: Any, service: Any) -> None:
    tenant = new_name("t")
    bound = connect(token=service.token(tenant, session="s-mine", perms=("read", "write")))
    wide = connect(token=service.token(tenant, perms=("read", "write")))
    theirs = await run(wide.put(b"in s-other", session="s-other"))
    with pytest.raises(ForbiddenError, match='bound to session "s-mine"'):
        await run(bound.end_session("s-other"))
    with pytest.raises(ForbiddenError):
        await run(connect(token=service.token(tenant, trace="tr-1")).end_session("s-other"))
    assert await run(wide.exists(theirs.id, session="s-other")) is True
    # The client does not know a session-bound token's session: it asks for it.
    with pytest.raises(BadRequestError, match="Name the session to end"):
        await run(bound.end_session())
    mine = await run(bound.put(b"mine"))
    assert (await run(bound.end_session("s-mine"))).refs == 1
    assert await run(bound.exists(mine.id)) is False


async def test_a_malformed_session_id_is_refused_before_anything_is_sent(connect: Any) -> None:
    recorder = Recorder(httpx.Response(200, json={"sessionId": "x", "refs": 0, "bytes": 0, "versions": 0}))
    client = mock(connect, recorder)
    for bad in ("", ".", "..", "x" * 257):
        with pytest.raises(BadRequestError):
            await run(client.end_session(bad))
    assert recorder.requests == []


async def test_ending_a_session_is_retried_like_a_delete(connect: Any) -> None:
    answer = {"sessionId": "a b/c", "refs": 2, "bytes": 10, "versions": 1}
    recorder = Recorder(httpx.ConnectError("refused"), busy(503), httpx.Response(200, json=answer))
    client = mock(connect, recorder)
    assert await run(client.end_session("a b/c")) == SessionEnd("a b/c", 2, 10, 1)
    assert [(r.method, r.url.raw_path) for r in recorder.requests] == [("DELETE", b"/v1/sessions/a%20b%2Fc")] * 3
