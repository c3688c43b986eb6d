"""artifact_store_client.adk against the real service over HTTP: what ADK's contract asks, what ADK's
own S3ArtifactService gets wrong (parallel saves, listings past one page), and what the service adds.

ADK's artifact service is async only, so every test is async; each runs over both clients (the async
one awaited, the sync one in worker threads). test_adk_cases.py runs the list of cases shared with
the TypeScript adapter.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import httpx
import pytest
from support import Service, new_name, run

from artifact_store_client import AsyncArtifactStoreClient, ForbiddenError, QuotaExceededError
from artifact_store_client.adk import (
    ADK_AVAILABLE,
    GENAI_AVAILABLE,
    ArtifactStoreArtifactService,
    ArtifactVersion,
    Blob,
    FileData,
    InputValidationError,
    Part,
)

APP = "travel_agent"


@pytest.fixture
def adk(client: Any) -> ArtifactStoreArtifactService:
    """The service over a client of each kind, with a tenant-wide token of a fresh tenant."""
    return ArtifactStoreArtifactService(client)


def scope(session: str | None = "s1", user: str = "alice", app: str = APP) -> dict[str, Any]:
    return {"app_name": app, "user_id": user, "session_id": session}


async def test_save_load_list_and_delete_as_adk_defines_them(adk: ArtifactStoreArtifactService) -> None:
    pdf = Part(inline_data=Blob(data=b"%PDF-1.7 q3", mime_type="application/pdf"))
    assert await adk.save_artifact(**scope(), filename="report.pdf", artifact=pdf) == 0
    assert await adk.save_artifact(**scope(), filename="report.pdf", artifact=Part(text="v1")) == 1
    assert await adk.load_artifact(**scope(), filename="report.pdf") == Part(text="v1")
    assert await adk.load_artifact(**scope(), filename="report.pdf", version=0) == pdf
    assert await adk.load_artifact(**scope(), filename="report.pdf", version=2) is None
    assert await adk.list_versions(**scope(), filename="report.pdf") == [0, 1]
    assert await adk.list_artifact_keys(**scope()) == ["report.pdf"]

    versions = await adk.list_artifact_versions(**scope(), filename="report.pdf")
    assert all(isinstance(v, ArtifactVersion) for v in versions)
    assert [(v.version, v.mime_type, v.custom_metadata) for v in versions] == [
        (0, "application/pdf", {}),
        (1, "text/plain; charset=utf-8", {}),
    ]
    assert versions[0].canonical_uri.startswith(f"{adk.client.base_url}/v1/artifacts/{APP}_")
    latest = await adk.get_artifact_version(**scope(), filename="report.pdf")
    assert latest is not None and latest.version == 1 and latest.create_time >= versions[0].create_time

    await adk.delete_artifact(**scope(), filename="report.pdf")
    assert await adk.load_artifact(**scope(), filename="report.pdf") is None
    assert await adk.list_versions(**scope(), filename="report.pdf") == []
    assert await adk.list_artifact_versions(**scope(), filename="report.pdf") == []
    assert await adk.get_artifact_version(**scope(), filename="report.pdf") is None
    await adk.delete_artifact(**scope(), filename="report.pdf")  # nothing to delete: no error
    assert await adk.save_artifact(**scope(), filename="report.pdf", artifact=pdf) == 0


async def test_apps_users_and_sessions_are_isolated(adk: ArtifactStoreArtifactService) -> None:
    await adk.save_artifact(**scope(), filename="notes.txt", artifact=Part(text="alice s1"))
    await adk.save_artifact(**scope(), filename="user:prefs.json", artifact=Part(text="alice"))
    for other in (scope(app="other_app"), scope(user="bob"), scope(session="s2")):
        assert await adk.load_artifact(**other, filename="notes.txt") is None
        assert await adk.list_versions(**other, filename="notes.txt") == []
    # A user: filename is the user's in every session, and nobody else's.
    assert await adk.load_artifact(**scope(session="s2"), filename="user:prefs.json") == Part(text="alice")
    assert await adk.load_artifact(**scope(session=None), filename="user:prefs.json") == Part(text="alice")
    assert await adk.load_artifact(**scope(user="bob"), filename="user:prefs.json") is None
    assert await adk.load_artifact(**scope(app="other_app"), filename="user:prefs.json") is None
    assert await adk.list_artifact_keys(**scope(session="s2")) == ["user:prefs.json"]
    assert await adk.list_artifact_keys(**scope(user="bob")) == []
    # The same filename in each scope is its own artifact, numbered from 0.
    for other in (scope(app="other_app"), scope(user="bob"), scope(session="s2")):
        assert await adk.save_artifact(**other, filename="notes.txt", artifact=Part(text="other")) == 0
    await adk.delete_artifact(**scope(session="s2"), filename="notes.txt")
    assert await adk.load_artifact(**scope(), filename="notes.txt") == Part(text="alice s1")
    with pytest.raises(InputValidationError, match="belongs to a session"):
        await adk.load_artifact(**scope(session=None), filename="notes.txt")


async def test_a_token_bound_to_a_user_serves_that_user_only(service: Service, connect: Any) -> None:
    tenant = new_name("t")
    adk = ArtifactStoreArtifactService(connect(token=service.token(tenant, perms=("read", "write"), sub="alice")))
    assert await adk.save_artifact(**scope(), filename="a.txt", artifact=Part(text="mine")) == 0
    assert await adk.load_artifact(**scope(session="s9"), filename="a.txt") is None
    with pytest.raises(ForbiddenError):
        await adk.load_artifact(**scope(user="bob"), filename="a.txt")


async def test_fifty_parallel_saves_of_one_name_get_fifty_distinct_versions(adk: ArtifactStoreArtifactService) -> None:
    # ADK's S3ArtifactService numbers a save as the highest listed version plus one, with no
    # conditional write: parallel saves share numbers and overwrite each other. The service numbers
    # each in the save's own transaction.
    saved = await asyncio.gather(
        *(adk.save_artifact(**scope(), filename="log.txt", artifact=Part(text=f"save {i}")) for i in range(50))
    )
    assert sorted(saved) == list(range(50))
    assert await adk.list_versions(**scope(), filename="log.txt") == list(range(50))
    for i, version in enumerate(saved):
        assert await adk.load_artifact(**scope(), filename="log.txt", version=version) == Part(text=f"save {i}")


async def save_many(adk: ArtifactStoreArtifactService, count: int, filename: Any, **where: Any) -> None:
    """`count` saves, 50 at a time."""
    for start in range(0, count, 50):
        await asyncio.gather(
            *(
                adk.save_artifact(**where, filename=filename(i), artifact=Part(text=str(i)))
                for i in range(start, min(count, start + 50))
            )
        )


async def test_a_name_with_1500_versions_lists_every_one(service: Service) -> None:
    # ADK's S3ArtifactService reads one page of keys (1,000) and stops.
    async with AsyncArtifactStoreClient(base_url=service.url, token=service.token()) as client:
        adk = ArtifactStoreArtifactService(client)
        await save_many(adk, 1500, lambda i: "user:many.txt", **scope())
        assert await adk.list_versions(**scope(), filename="user:many.txt") == list(range(1500))
        versions = await adk.list_artifact_versions(**scope(), filename="user:many.txt")
        assert [v.version for v in versions] == list(range(1500))
        assert await adk.load_artifact(**scope(), filename="user:many.txt", version=1499) is not None


async def test_list_artifact_keys_reads_every_page_past_1000_names(service: Service) -> None:
    async with AsyncArtifactStoreClient(base_url=service.url, token=service.token()) as client:
        adk = ArtifactStoreArtifactService(client)
        # User-wide, since a session holds at most 1,000 artifacts by default (maxArtifactsPerSession).
        await save_many(adk, 1100, lambda i: f"user:file-{i:04d}.txt", **scope())
        await save_many(adk, 3, lambda i: f"in-session-{i}.txt", **scope())
        keys = await adk.list_artifact_keys(**scope())
        assert keys == sorted([f"user:file-{i:04d}.txt" for i in range(1100)] + [f"in-session-{i}.txt" for i in range(3)])
        assert len(await adk.list_artifact_keys(**scope(session=None))) == 1100


async def test_the_stored_form_is_the_typescript_adapters(adk: ArtifactStoreArtifactService, client: Any) -> None:
    """What artifact-store-sdk/adk writes (src/adk/parts.ts), so either adapter loads the other's versions."""
    where = {"user_id": "alice", "session_id": "s1"}
    png = Part(inline_data=Blob(data=b"\x89PNG\r\n", mime_type="image/png", display_name="Chart.png"))
    await adk.save_artifact(**scope(), filename="dir/chart.png", artifact=png, custom_metadata={"step": 2})
    await adk.save_artifact(**scope(), filename="notes.md", artifact=Part(text="ünï"))
    await adk.save_artifact(
        **scope(), filename="user:doc.pdf", artifact=Part(file_data=FileData(file_uri="gs://b/doc.pdf"))
    )
    chart = await run(client.load_version(APP, "dir/chart.png", **where))
    assert chart.data == b"\x89PNG\r\n"
    assert (chart.ref.mime_type, chart.ref.filename, chart.ref.meta) == ("image/png", "Chart.png", {"step": 2})
    assert chart.ref.source == {"adk": {"part": "inlineData", "mimeType": "image/png", "displayName": "Chart.png"}}
    notes = await run(client.load_version(APP, "notes.md", **where))
    assert (notes.data, notes.ref.mime_type, notes.ref.meta) == ("ünï".encode(), "text/plain; charset=utf-8", None)
    assert notes.ref.source == {"adk": {"part": "text"}} and notes.ref.filename == "notes.md"
    doc = await run(client.load_version(APP, "user:doc.pdf", user_id="alice", user_wide=True))
    assert (doc.data, doc.ref.mime_type, doc.ref.filename) == (b"gs://b/doc.pdf\r\n", "text/uri-list", "doc.pdf")
    assert doc.ref.source == {"adk": {"part": "fileData", "mimeType": None}}

    # Versions saved by other means: text/plain loads as text, anything else as inline_data.
    await run(client.save_version(APP, "plain.txt", "from the SDK", **where))
    await run(client.save_version(APP, "data.csv", b"a,b\n", mime_type="text/csv", **where))
    assert await adk.load_artifact(**scope(), filename="plain.txt") == Part(text="from the SDK")
    assert await adk.load_artifact(**scope(), filename="data.csv") == Part(
        inline_data=Blob(data=b"a,b\n", mime_type="text/csv")
    )


async def test_dict_artifacts_in_camel_and_snake_case(adk: ArtifactStoreArtifactService) -> None:
    camel = {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(b"png bytes").decode()}}
    snake = {"inline_data": {"mime_type": "text/csv", "data": b"a,b\n" if not GENAI_AVAILABLE else "YSxiCg=="}}
    assert await adk.save_artifact(**scope(), filename="a.png", artifact=camel) == 0
    assert await adk.save_artifact(**scope(), filename="b.csv", artifact=snake) == 0
    assert await adk.save_artifact(**scope(), filename="c.txt", artifact={"text": "hello"}) == 0
    uri = {"file_data": {"file_uri": "https://example.com/x.pdf", "mime_type": "application/pdf"}}
    assert await adk.save_artifact(**scope(), filename="d.pdf", artifact=uri) == 0
    assert await adk.load_artifact(**scope(), filename="a.png") == Part(
        inline_data=Blob(data=b"png bytes", mime_type="image/png")
    )
    assert await adk.load_artifact(**scope(), filename="b.csv") == Part(
        inline_data=Blob(data=b"a,b\n", mime_type="text/csv")
    )
    assert await adk.load_artifact(**scope(), filename="c.txt") == Part(text="hello")
    assert await adk.load_artifact(**scope(), filename="d.pdf") == Part(
        file_data=FileData(file_uri="https://example.com/x.pdf", mime_type="application/pdf")
    )
    with pytest.raises(InputValidationError, match="has no content"):
        await adk.save_artifact(**scope(), filename="e", artifact={})
    with pytest.raises(InputValidationError, match="not base64"):
        await adk.save_artifact(**scope(), filename="e", artifact={"inlineData": {"data": "***", "mimeType": "x/y"}})


async def test_empty_text_is_kept_as_adk_for_python_keeps_it(adk: ArtifactStoreArtifactService) -> None:
    # ADK for Python saves Part(text="") (its GCS service loads it back); ADK for TypeScript refuses it.
    assert await adk.save_artifact(**scope(), filename="empty.txt", artifact=Part(text="")) == 0
    assert await adk.load_artifact(**scope(), filename="empty.txt") == Part(text="")


async def test_a_padded_session_id_is_the_session_adk_stores(adk: ArtifactStoreArtifactService) -> None:
    # ADK's session services strip the session id, and so do its artifact services.
    await adk.save_artifact(**scope(session="s1\n"), filename="r.txt", artifact=Part(text="hi"))
    assert await adk.load_artifact(**scope(session="s1"), filename="r.txt") == Part(text="hi")
    assert await adk.list_artifact_keys(**scope(session=" s1 ")) == ["r.txt"]


async def test_the_same_bytes_saved_twice_are_one_artifact(adk: ArtifactStoreArtifactService) -> None:
    part = Part(inline_data=Blob(data=b"x" * 4096, mime_type="application/octet-stream"))
    await adk.save_artifact(**scope(), filename="a.bin", artifact=part)
    await adk.save_artifact(**scope(), filename="a.bin", artifact=part)
    await adk.save_artifact(**scope(session="s2"), filename="b.bin", artifact=part)
    first, second = await adk.list_artifact_versions(**scope(), filename="a.bin")
    other = await adk.get_artifact_version(**scope(session="s2"), filename="b.bin")
    assert first.canonical_uri == second.canonical_uri == other.canonical_uri  # one blob, stored once


async def test_a_version_link_downloads_without_a_token(adk: ArtifactStoreArtifactService) -> None:
    pdf = b"%PDF-1.7 " + bytes(range(256)) * 64
    await adk.save_artifact(**scope(), filename="report.pdf", artifact=Part.from_bytes(data=pdf, mime_type="application/pdf"))
    await adk.save_artifact(**scope(), filename="report.pdf", artifact=Part(text="v1"))
    link = await adk.version_url(**scope(), filename="report.pdf", version=0, expires_in=300, disposition="attachment")
    assert (link.fetch_mode, link.mime_type, link.size_bytes) == ("proxy", "application/pdf", len(pdf))
    async with httpx.AsyncClient() as browser:
        got = await browser.get(link.url)
    assert got.status_code == 200 and got.content == pdf
    assert "attachment" in got.headers["content-disposition"]
    latest = await adk.version_url(**scope(), filename="report.pdf")
    assert latest.mime_type == "text/plain; charset=utf-8"
    with pytest.raises(InputValidationError, match="whole numbers"):
        await adk.version_url(**scope(), filename="report.pdf", version=-1)


async def test_ttl_and_quotas_are_the_services(service: Service, connect: Any) -> None:
    lasting = ArtifactStoreArtifactService(connect(), ttl=3600)
    await lasting.save_artifact(**scope(), filename="brief.txt", artifact=Part(text="short-lived"))
    ref = await run(lasting.client.version_ref(APP, "brief.txt", user_id="alice", session_id="s1"))
    assert ref.expires_at is not None
    # The "tight" tenant may hold 64 bytes: a save past that is refused, never evicting a version.
    # It is shared (conftest.POLICIES), so the test leaves it empty.
    tight = ArtifactStoreArtifactService(connect(token=service.token("tight")))
    where = scope(session=new_name("s"))
    await tight.save_artifact(**where, filename="a.txt", artifact=Part(text="x" * 40))
    try:
        with pytest.raises(QuotaExceededError):
            await tight.save_artifact(**where, filename="a.txt", artifact=Part(text="y" * 40))
        assert await tight.list_versions(**where, filename="a.txt") == [0]
    finally:
        await tight.delete_artifact(**where, filename="a.txt")


async def test_canonical_uri_is_the_services_url_and_never_an_adk_artifact_reference(service: Service) -> None:
    token = service.token()
    adk = ArtifactStoreArtifactService(base_url=service.url, token=token)
    async with adk:
        pdf = b"%PDF-1.7 " + bytes(range(256)) * 16
        await adk.save_artifact(**scope(), filename="report.pdf", artifact=Part.from_bytes(data=pdf, mime_type="application/pdf"))
        version = await adk.get_artifact_version(**scope(), filename="report.pdf")
    assert version is not None
    uri = version.canonical_uri
    # ADK for Python takes every artifact:// URI for its own reference (artifact_util.is_artifact_ref).
    assert not uri.startswith("artifact://")
    assert uri.startswith(f"{service.url.rstrip('/')}/v1/artifacts/{APP}_")
    if ADK_AVAILABLE:
        from google.adk.artifacts import artifact_util

        assert not artifact_util.is_artifact_ref(Part.from_uri(file_uri=uri, mime_type="application/pdf"))
    # Like gs://, it is fetched with the service's credentials.
    async with httpx.AsyncClient() as http:
        refused = await http.get(uri)
        got = await http.get(uri, headers={"authorization": f"Bearer {token}"})
    assert refused.status_code == 401
    assert got.status_code == 200 and got.content == pdf


async def test_it_makes_and_closes_its_own_client(service: Service) -> None:
    adk = ArtifactStoreArtifactService(base_url=service.url, token=service.token())
    assert isinstance(adk.client, AsyncArtifactStoreClient)
    async with adk:
        assert await adk.save_artifact(**scope(), filename="x.txt", artifact=Part(text="x")) == 0
    with pytest.raises(ValueError, match="either a client"):
        ArtifactStoreArtifactService(adk.client, token="t")


async def test_it_is_adks_artifact_service_where_adk_is_installed() -> None:
    if ADK_AVAILABLE:
        from google.adk.artifacts import BaseArtifactService

        assert issubclass(ArtifactStoreArtifactService, BaseArtifactService)
    else:
        # Without google-adk and google-genai: the same fields, and ADK's defaults.
        version = ArtifactVersion(version=0, canonical_uri="artifact://x")
        assert version.custom_metadata == {} and version.mime_type is None and version.create_time > 0
        assert Part.from_text(text="t") == Part(text="t")
        assert Part.from_bytes(data=b"b", mime_type="a/b").inline_data == Blob(data=b"b", mime_type="a/b")
        assert issubclass(InputValidationError, ValueError)



def test_the_example_saves_loads_lists_links_and_deletes(service: Service) -> None:
    from test_examples import run_example

    lines = run_example("adk_python.py", service).splitlines()
    assert lines == [
        "chart.png version 1: [(0, 'image/png', {}), (1, 'image/png', {'step': 2})]",
        "version 0 loads 72 bytes of image/png",
        "same artifact: True; session s-2 sees ['user:itinerary.txt']",
        "link proxy (image/png); parallel saves got True",
    ]
