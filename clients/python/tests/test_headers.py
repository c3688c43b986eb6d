"""What a put sends: its description as headers, non-ASCII text as RFC 8187 ext-values."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

import httpx
from support import opened, read_all, recording, run

from artifact_store_client._headers import text_header

REF = {
    "id": "art_" + "a" * 24,
    "mimeType": "application/pdf",
    "sizeBytes": 1,
    "sha256": "a" * 64,
    "namespace": "art",
    "scope": {"tenantId": "t"},
    "createdAt": "2026-01-01T00:00:00.000Z",
    "someFieldOfANewerService": True,
}


def test_text_headers() -> None:
    assert text_header("report.pdf") == "report.pdf"
    assert text_header("Résumé (1).pdf") == "UTF-8''R%C3%A9sum%C3%A9%20%281%29.pdf"
    assert text_header("it's") == "it's"
    assert text_header("a'b'c") == "UTF-8''a%27b%27c"
    assert text_header(" padded ") == "UTF-8''%20padded%20"
    assert text_header("tab\there") == "UTF-8''tab%09here"


async def test_a_put_sends_its_options_as_headers(connect: Any) -> None:
    sent: list[httpx.Request] = []
    transport = recording(sent, lambda: httpx.Response(201, json=REF))
    client = connect(base_url="http://store.test/prefix", token="tok", transport=transport, scope={"user": "u-1"})
    ref = await run(
        client.put(
            b"x",
            mime_type="application/pdf",
            filename="Übersicht.pdf",
            namespace="reports",
            meta={"title": "Übersicht", "n": 1},
            source={"tool": "export"},
            ttl=60,
            sha256="b" * 64,
            session="s-1",
        )
    )
    assert ref.mime_type == "application/pdf"
    assert not hasattr(ref, "some_field_of_a_newer_service")
    [request] = sent
    assert (request.method, request.url.path) == ("POST", "/prefix/v1/artifacts")
    h = request.headers
    assert h["authorization"] == "Bearer tok"
    assert h["content-type"] == "application/pdf"
    assert h["content-length"] == "1"
    assert h["x-artifact-filename"] == "UTF-8''%C3%9Cbersicht.pdf"
    assert h["x-artifact-namespace"] == "reports"
    assert json.loads(unquote(h["x-artifact-meta"].removeprefix("UTF-8''"))) == {"title": "Übersicht", "n": 1}
    assert json.loads(h["x-artifact-source"]) == {"tool": "export"}
    assert (h["x-artifact-ttl"], h["x-artifact-sha256"]) == ("60", "b" * 64)
    assert (h["x-artifact-session"], h["x-artifact-user"]) == ("s-1", "u-1")
    assert "x-artifact-trace" not in h


async def test_reads_send_the_scope_and_quote_the_id(connect: Any) -> None:
    sent: list[httpx.Request] = []
    transport = recording(sent, lambda: httpx.Response(200, content=b"abc"))
    client = connect(base_url="http://store.test", transport=transport, scope={"session": "s-1", "trace": "tr"})
    await run(client.get("odd/id?", range=(1, 2), user="u"))
    [request] = sent
    assert request.url.raw_path == b"/v1/artifacts/odd%2Fid%3F"
    assert request.headers["range"] == "bytes=1-2"
    scope = {k: request.headers.get(f"x-artifact-{k}") for k in ("session", "trace", "user")}
    assert scope == {"session": "s-1", "trace": "tr", "user": "u"}


async def test_a_range_ignored_on_the_way_is_cut_out_here(connect: Any) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=b"0123456789"))
    client = connect(base_url="http://store.test", transport=transport)
    assert await run(client.get("art_x", range=(2, 4))) == b"234"
    async with opened(client.stream("art_x", range=(7, None))) as chunks:
        assert await read_all(chunks) == b"789"
