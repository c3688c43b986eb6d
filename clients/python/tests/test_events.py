"""GET /v1/events: resuming by event id, reconnecting after drops and busy answers, and the SSE parser."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from support import collect, run

from artifact_store_client import ArtifactEvent, UnauthorizedError
from artifact_store_client._sse import Message, SseParser


async def test_events_resume_after_the_last_one_seen(client: Any) -> None:
    first = await run(client.put(b"first"))
    second = await run(client.put(b"second"))
    # "0": from the start of the outbox; this tenant is new, so its events are the two puts.
    [seen] = await collect(client.events(last_event_id="0"), limit=1)
    assert isinstance(seen, ArtifactEvent)
    assert (seen.type, seen.ref.id) == ("artifact.stored", first.id)
    [after] = await collect(client.events(last_event_id=seen.id), limit=1)
    assert (after.type, after.ref.id) == ("artifact.stored", second.id)
    assert int(after.id) > int(seen.id)


async def test_events_of_one_session_and_of_deletes(client: Any) -> None:
    await run(client.put(b"elsewhere", session="s-other"))
    kept = await run(client.put(b"kept", session="s-watched"))
    await run(client.delete(kept.id, session="s-watched"))
    events = await collect(client.events(last_event_id="0", session="s-watched"), limit=2)
    assert [(e.type, e.ref.id, e.ref.scope.session_id) for e in events] == [
        ("artifact.stored", kept.id, "s-watched"),
        ("artifact.deleted", kept.id, "s-watched"),
    ]


async def test_an_event_stream_refused_for_good_raises(connect: Any) -> None:
    client = connect(token="not-a-jwt")
    with pytest.raises(UnauthorizedError):
        await collect(client.events(), limit=1)


REF = {
    "id": "art_" + "a" * 24,
    "mimeType": "text/plain",
    "sizeBytes": 1,
    "sha256": "a" * 64,
    "namespace": "art",
    "scope": {"tenantId": "t"},
    "createdAt": "2026-01-01T00:00:00.000Z",
}


def sse(event_id: int, kind: str = "artifact.stored", **data: Any) -> bytes:
    body = json.dumps({"type": kind, "ref": {**REF, "id": f"art_{event_id:024x}"}, "at": REF["createdAt"], **data})
    return f"event: {kind}\ndata: {body}\nid: {event_id}\n\n".encode()


class Dropping(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A response body sent in small pieces that ends with a broken connection."""

    def __init__(self, data: bytes) -> None:
        self.pieces = [data[i : i + 5] for i in range(0, len(data), 5)]

    def __iter__(self) -> Iterator[bytes]:
        yield from self.pieces
        raise httpx.ReadError("connection reset")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece
        raise httpx.ReadError("connection reset")


async def test_events_reconnect_with_last_event_id(connect: Any) -> None:
    audit = b'event: audit.recorded\ndata: {"type":"audit.recorded","audit":{},"at":"x"}\nid: 8\n\n'
    answers: list[httpx.Response | Exception] = [
        httpx.Response(200, stream=Dropping(b": connected\n\nid: 5\ndata\n\n" + sse(6))),
        httpx.Response(503, headers={"Retry-After": "0"}, json={"code": "backend_unavailable", "message": "busy"}),
        httpx.Response(429, headers={"Retry-After": "0"}, json={"code": "rate_limited", "message": "slow"}),
        httpx.ConnectError("refused"),
        # An orderly end (the service restarting) reconnects too.
        httpx.Response(200, content=sse(7) + audit + b"id: 9\r\ndata\r\n\r\n"),
        httpx.Response(200, stream=Dropping(sse(10))),
    ]
    seen: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("last-event-id"))
        assert request.headers["accept"] == "text/event-stream"
        assert request.url.params["session"] == "s1"
        next_answer = answers.pop(0)
        if isinstance(next_answer, Exception):
            raise next_answer
        return next_answer

    client = connect(base_url="http://store.test", transport=httpx.MockTransport(answer), retry_base_delay=0.001)
    events = await collect(client.events(session="s1"), limit=3)
    assert [e.id for e in events] == ["6", "7", "10"]
    assert events[0].ref.id == f"art_{6:024x}"
    assert seen == [None, "6", "6", "6", "6", "9"]


def test_sse_parser_takes_chunks_split_anywhere() -> None:
    stream = (
        ": comment\r\nid: 41\r\ndata\r\n\r\n"
        'event: e\ndata: {"a":\ndata:  1}\nid: 42\n\n'
        "retry: 5\ndata: ü\n\n"
    ).encode()
    messages: list[Message] = []
    parser = SseParser()
    for i in range(len(stream)):
        messages.extend(parser.feed(stream[i : i + 1]))
    assert messages == [
        Message("41", None, ""),
        Message("42", "e", '{"a":\n 1}'),
        Message(None, None, "ü"),
    ]
