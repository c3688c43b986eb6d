"""Puts, reads, listings, links and deletes against the real service, with both clients."""

from __future__ import annotations

import hashlib
import io
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from support import collect, new_name, opened, read_all, recording, run

from artifact_store_client import ArtifactRef, BadRequestError, InvalidRangeError, NotFoundError, Page

DATA = b"%PDF-1.7 fake report \x00\x01\x02 with bytes"


def chunks_of(data: bytes, size: int = 7) -> Any:
    return (data[i : i + size] for i in range(0, len(data), size))


async def async_chunks_of(data: bytes, size: int = 7) -> Any:
    for chunk in chunks_of(data, size):
        yield chunk


PUT_KINDS = ["bytes", "bytearray", "path", "file", "iterator", "async iterator"]


@pytest.mark.parametrize("kind", PUT_KINDS)
async def test_put_takes_every_kind_of_body(client: Any, is_async: bool, kind: str, tmp_file: Any) -> None:
    if kind == "async iterator" and not is_async:
        with pytest.raises(TypeError, match="AsyncArtifactStoreClient"):
            client.put(async_chunks_of(DATA))
        return
    data: Any = {
        "bytes": lambda: DATA,
        "bytearray": lambda: bytearray(DATA),
        "path": lambda: tmp_file(DATA),
        "file": lambda: io.BytesIO(DATA),
        "iterator": lambda: chunks_of(DATA),
        "async iterator": lambda: async_chunks_of(DATA),
    }[kind]()
    ref = await run(client.put(data, mime_type="application/pdf"))
    assert isinstance(ref, ArtifactRef)
    assert ref.size_bytes == len(DATA)
    assert ref.sha256 == hashlib.sha256(DATA).hexdigest()
    assert ref.mime_type == "application/pdf"
    assert ref.id == f"art_{ref.sha256[:24]}"
    assert await run(client.get(ref.id)) == DATA


async def test_put_of_text_is_utf8_plain_text(client: Any) -> None:
    ref = await run(client.put("héllo wörld"))
    assert ref.mime_type.startswith("text/plain")
    assert await run(client.get(ref.id)) == "héllo wörld".encode()


async def test_put_of_a_file_object_sends_it_from_where_it_stands(client: Any) -> None:
    file = io.BytesIO(b"HEADER" + DATA)
    file.seek(6)
    ref = await run(client.put(file))
    assert await run(client.get(ref.id)) == DATA


async def test_put_file_names_and_types_the_artifact_after_the_file(client: Any, tmp_file: Any) -> None:
    path = tmp_file(b"a,b\n1,2\n", "table.csv")
    ref = await run(client.put_file(path))
    assert ref.filename == "table.csv"
    assert ref.mime_type.startswith("text/csv")
    named = await run(client.put_file(str(path), filename="other.txt", mime_type="text/plain"))
    assert (named.filename, named.mime_type) == ("other.txt", "text/plain")


async def test_put_carries_its_description(client: Any) -> None:
    ref = await run(
        client.put(
            DATA,
            mime_type="application/pdf",
            filename="Résumé 2026 (final).pdf",
            namespace="tableau.download_workbook",
            meta={"pages": 3, "title": "Übersicht"},
            source={"tool": "download_workbook"},
            ttl=600,
            sha256=hashlib.sha256(DATA).hexdigest(),
            session="s-42",
            trace="tr-1",
            user="u-7",
        )
    )
    assert ref.id.startswith("tableau.download_workbook_")
    assert ref.filename == "Résumé 2026 (final).pdf"
    assert ref.namespace == "tableau.download_workbook"
    assert ref.meta == {"pages": 3, "title": "Übersicht"}
    assert ref.source == {"tool": "download_workbook"}
    assert (ref.scope.session_id, ref.scope.trace_id, ref.scope.user_id) == ("s-42", "tr-1", "u-7")
    assert isinstance(ref.created_at, datetime) and ref.created_at.tzinfo is not None
    assert ref.expires_at is not None
    assert timedelta(seconds=590) < ref.expires_at - ref.created_at <= timedelta(seconds=601)


async def test_a_filename_that_looks_like_an_ext_value_comes_back_as_written(client: Any) -> None:
    ref = await run(client.put(DATA, filename="UTF-8''not-encoded.txt"))
    assert ref.filename == "UTF-8''not-encoded.txt"


async def test_puts_are_idempotent(client: Any) -> None:
    first = await run(client.put(DATA))
    again = await run(client.put(DATA, filename="renamed.bin"))
    assert again.id == first.id
    assert again.filename == "renamed.bin"


async def test_get_stream_and_ranges(client: Any) -> None:
    ref = await run(client.put(DATA))
    assert await run(client.get(ref.id, range=(4, 7))) == DATA[4:8]
    assert await run(client.get(ref.id, range=(10, None))) == DATA[10:]
    async with opened(client.stream(ref.id)) as chunks:
        assert await read_all(chunks) == DATA
    async with opened(client.stream(ref.id, range=(0, 3))) as chunks:
        assert await read_all(chunks) == DATA[:4]


async def test_a_range_past_the_end_is_refused(client: Any) -> None:
    ref = await run(client.put(DATA))
    with pytest.raises(InvalidRangeError) as caught:
        await run(client.get(ref.id, range=(len(DATA) + 10, len(DATA) + 20)))
    assert caught.value.status == 416
    with pytest.raises(InvalidRangeError):
        async with opened(client.stream(ref.id, range=(1000, None))):
            pass


async def test_missing_artifacts(client: Any) -> None:
    missing = "art_" + "0" * 24
    assert await run(client.get(missing)) is None
    assert await run(client.meta(missing)) is None
    assert await run(client.exists(missing)) is False
    assert await run(client.delete(missing)) is False
    with pytest.raises(NotFoundError) as caught:
        async with opened(client.stream(missing)):
            pass
    assert caught.value.status == 404
    with pytest.raises(NotFoundError):
        await run(client.url(missing))


async def test_meta_exists_and_delete(client: Any) -> None:
    ref = await run(client.put(DATA, filename="a.pdf", meta={"k": "v"}))
    meta = await run(client.meta(ref.id))
    assert meta is not None
    assert (meta.id, meta.filename, meta.meta, meta.size_bytes) == (ref.id, "a.pdf", {"k": "v"}, len(DATA))
    assert await run(client.exists(ref.id)) is True
    assert await run(client.delete(ref.id)) is True
    assert await run(client.exists(ref.id)) is False
    assert await run(client.delete(ref.id)) is False


async def test_list_pages_through_cursors(client: Any) -> None:
    ids = [(await run(client.put(f"item {i}", namespace="listing"))).id for i in range(5)]
    await run(client.put(b"\x89PNG other", mime_type="image/png", namespace="other"))

    first = await run(client.list(namespace="listing", limit=2))
    assert isinstance(first, Page)
    assert len(first.items) == 2 and first.next_cursor
    second = await run(client.list(namespace="listing", limit=2, cursor=first.next_cursor))
    assert {r.id for r in first.items}.isdisjoint(r.id for r in second.items)

    every = await collect(client.iter_list(namespace="listing", limit=2))
    assert [r.id for r in every] == list(reversed(ids))  # newest first
    images = await collect(client.iter_list(mime_prefix="image/"))
    assert [r.namespace for r in images] == ["other"]
    later = await run(client.list(created_after=datetime.now(timezone.utc) + timedelta(hours=1)))
    assert later.items == []


async def test_list_searches_and_sorts(client: Any) -> None:
    small = await run(client.put(b"a", namespace="sorted", filename="Zeta report.txt"))
    big = await run(client.put(b"b" * 50, namespace="sorted", filename="alpha.txt"))
    found = await run(client.list(namespace="sorted", q="REPORT"))
    assert [r.id for r in found.items] == [small.id]
    largest = await run(client.list(namespace="sorted", sort="largest"))
    assert [r.id for r in largest.items] == [big.id, small.id]
    by_name = await run(client.list(namespace="sorted", sort="name", limit=1))
    assert [r.id for r in by_name.items] == [small.id]  # byte order: capitals first
    rest = await run(client.list(namespace="sorted", sort="name", limit=1, cursor=by_name.next_cursor))
    assert [r.id for r in rest.items] == [big.id]
    with pytest.raises(BadRequestError):
        await run(client.list(sort="biggest"))


async def test_list_of_a_session(client: Any) -> None:
    await run(client.put(b"in s1", session="s1"))
    await run(client.put(b"in s2", session="s2"))
    page = await run(client.list(session="s1"))
    assert [r.scope.session_id for r in page.items] == ["s1"]


async def test_url_serves_the_bytes_without_a_token(client: Any) -> None:
    ref = await run(client.put(DATA, mime_type="application/pdf", filename="report.pdf"))
    link = await run(client.url(ref.id, expires_in=300, disposition="attachment"))
    assert link.fetch_mode == "proxy"
    assert (link.mime_type, link.size_bytes) == ("application/pdf", len(DATA))
    assert link.url_expires_at > datetime.now(timezone.utc)
    answer = httpx.get(link.url)
    assert answer.status_code == 200
    assert answer.content == DATA
    assert "attachment" in answer.headers["content-disposition"]
    # Direct links fall back to proxy ones on a store that cannot presign.
    assert (await run(client.url(ref.id, mode="direct"))).fetch_mode == "proxy"


async def test_usage_reports_the_tenant(connect: Any, service: Any) -> None:
    tenant = new_name("usage")
    client = connect(token=service.token(tenant))
    await run(client.put(DATA, session="s-usage"))
    report = await run(client.usage(top=5))
    assert [(t["tenantId"], t["bytes"], t["count"]) for t in report["tenants"]] == [(tenant, len(DATA), 1)]
    assert [s["sessionId"] for s in report["sessions"]] == ["s-usage"]


@pytest.mark.parametrize("kind", ["bytes", "iterator", "file"])
async def test_zero_byte_artifacts_are_stored(client: Any, kind: str) -> None:
    data: Any = {"bytes": b"", "iterator": iter([]), "file": io.BytesIO()}[kind]
    ref = await run(client.put(data, filename="empty.txt"))
    assert ref.size_bytes == 0
    assert ref.sha256 == hashlib.sha256(b"").hexdigest()
    assert await run(client.get(ref.id)) == b""
    async with opened(client.stream(ref.id)) as chunks:
        assert await read_all(chunks) == b""
    with pytest.raises(InvalidRangeError):
        await run(client.get(ref.id, range=(0, 0)))


async def test_namespaces_keep_their_case(client: Any) -> None:
    upper = await run(client.put(DATA, namespace="observation.ReadFile"))
    lower = await run(client.put(DATA, namespace="observation.readfile"))
    assert upper.namespace == "observation.ReadFile"
    assert upper.id.startswith("observation.ReadFile_")
    assert upper.id != lower.id
    assert await run(client.get(upper.id)) == DATA
    listed = await run(client.list(namespace="observation.ReadFile"))
    assert [r.id for r in listed.items] == [upper.id]


async def test_a_reference_that_never_expires_needs_the_operators_leave(client: Any) -> None:
    # This service does not allow it: the put is refused, and nothing is stored.
    with pytest.raises(BadRequestError):
        await run(client.put(DATA, ttl="never"))
    assert (await run(client.list())).items == []


async def test_a_reference_that_never_expires(connect: Any, unexpiring: Any) -> None:
    client = connect(base_url=unexpiring.url, token=unexpiring.token())
    ref = await run(client.put(DATA, ttl="never"))
    assert ref.expires_at is None
    meta = await run(client.meta(ref.id))
    assert meta is not None and meta.expires_at is None


async def test_ttl_never_is_sent_as_never(connect: Any) -> None:
    sent: list[httpx.Request] = []
    ref = {
        "id": "art_" + "a" * 24,
        "mimeType": "text/plain",
        "sizeBytes": 1,
        "sha256": "a" * 64,
        "namespace": "art",
        "scope": {"tenantId": "t"},
        "createdAt": "2026-01-01T00:00:00.000Z",
    }
    transport = recording(sent, lambda: httpx.Response(201, json=ref))
    client = connect(base_url="http://store.test", transport=transport)
    stored = await run(client.put(b"x", ttl="never"))
    assert sent[0].headers["x-artifact-ttl"] == "never"
    assert stored.expires_at is None
