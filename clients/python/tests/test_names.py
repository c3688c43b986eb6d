"""Named versions (/v1/names) against the real service, with both clients: numbers, scopes, pages, errors."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from support import collect, new_name, opened, read_all, run

from artifact_store_client import (
    ArtifactRef,
    BackendUnavailableError,
    BadRequestError,
    ForbiddenError,
    LoadedVersion,
    NameInfo,
    NamePage,
    NotFoundError,
    Scope,
)

APP = "adk.reports"


async def test_versions_count_from_zero_each_with_its_own_type_and_meta(client: Any) -> None:
    saved = [
        await run(client.save_version(APP, "q3.md", "# Q3, draft", meta={"step": "draft"})),
        await run(
            client.save_version(
                APP, "q3.md", b"# Q3\n", mime_type="text/markdown", filename="q3.md", meta={"step": "edited"}
            )
        ),
        await run(client.save_version(APP, "q3.md", b"%PDF-1.4 q3", mime_type="application/pdf", ttl=3600)),
    ]
    assert [(r.name, r.version, r.namespace) for r in saved] == [("q3.md", v, APP) for v in range(3)]
    assert [r.mime_type for r in saved] == ["text/plain; charset=utf-8", "text/markdown", "application/pdf"]
    assert [r.meta for r in saved] == [{"step": "draft"}, {"step": "edited"}, None]
    assert saved[1].filename == "q3.md" and saved[0].filename is None
    assert saved[0].expires_at is None and saved[2].expires_at is not None

    listed = await run(client.list_versions(APP, "q3.md"))
    assert [(r.version, r.mime_type, r.meta) for r in listed] == [(r.version, r.mime_type, r.meta) for r in saved]
    assert all(isinstance(r, ArtifactRef) for r in listed)
    # Each version reads back with its own description, and is an artifact like any other.
    one = await run(client.load_version(APP, "q3.md", 1))
    assert isinstance(one, LoadedVersion)
    assert (one.data, one.ref.mime_type, one.ref.meta) == (b"# Q3\n", "text/markdown", {"step": "edited"})
    assert await run(client.get(saved[2].id)) == b"%PDF-1.4 q3"
    assert (await run(client.meta(saved[2].id))).version == 2


async def test_the_same_bytes_saved_twice_are_two_versions_of_one_artifact(client: Any) -> None:
    first = await run(client.save_version(APP, "same", b"same bytes", meta={"n": 1}))
    second = await run(client.save_version(APP, "same", b"same bytes", mime_type="text/plain", meta={"n": 2}))
    assert first.id == second.id and first.sha256 == second.sha256
    assert (first.version, second.version) == (0, 1)
    versions = await run(client.list_versions(APP, "same"))
    assert [(r.id, r.version, r.meta) for r in versions] == [(first.id, 0, {"n": 1}), (first.id, 1, {"n": 2})]
    older = await run(client.version_ref(APP, "same", 0))
    assert (older.mime_type, older.meta) == ("application/octet-stream", {"n": 1})


async def test_load_reads_the_latest_a_given_version_or_none(client: Any) -> None:
    for text in ("v0", "v1", "v2"):
        await run(client.save_version(APP, "notes.txt", text))
    latest = await run(client.load_version(APP, "notes.txt"))
    assert latest is not None and (latest.data, latest.ref.version, latest.ref.name) == (b"v2", 2, "notes.txt")
    given = await run(client.load_version(APP, "notes.txt", version=0))
    assert given is not None and (given.data, given.ref.version) == (b"v0", 0)
    assert (await run(client.version_ref(APP, "notes.txt"))).version == 2

    assert await run(client.load_version(APP, "notes.txt", version=3)) is None
    assert await run(client.load_version(APP, "no-such-name")) is None
    assert await run(client.version_ref(APP, "no-such-name")) is None
    assert await run(client.list_versions(APP, "no-such-name")) == []
    assert await run(client.load_version("another.app", "notes.txt")) is None


async def test_stream_version_reads_a_version_as_it_arrives(client: Any) -> None:
    await run(client.save_version(APP, "log", b"0123456789"))
    await run(client.save_version(APP, "log", b"abcdefghij", mime_type="text/plain"))
    async with opened(client.stream_version(APP, "log")) as latest:
        assert (latest.ref.version, latest.ref.mime_type) == (1, "text/plain")
        assert await read_all(latest.chunks) == b"abcdefghij"
    async with opened(client.stream_version(APP, "log", 0, range=(2, 4))) as part:
        assert part.ref.version == 0
        assert await read_all(part.chunks) == b"234"
    with pytest.raises(NotFoundError):
        async with opened(client.stream_version(APP, "log", 5)):
            pass


async def test_version_url_links_a_version_for_a_browser(client: Any) -> None:
    await run(client.save_version(APP, "chart.svg", b"<svg>0</svg>", mime_type="image/svg+xml"))
    await run(client.save_version(APP, "chart.svg", b"<svg>one</svg>", mime_type="image/svg+xml"))
    latest = await run(client.version_url(APP, "chart.svg", expires_in=120))
    older = await run(client.version_url(APP, "chart.svg", 0, disposition="attachment"))
    assert (latest.fetch_mode, latest.mime_type, latest.size_bytes) == ("proxy", "image/svg+xml", 14)
    async with httpx.AsyncClient() as browser:  # no token
        assert (await browser.get(latest.url)).content == b"<svg>one</svg>"
        answer = await browser.get(older.url)
        assert answer.content == b"<svg>0</svg>"
        assert answer.headers["content-disposition"].startswith("attachment")
    with pytest.raises(NotFoundError):
        await run(client.version_url(APP, "chart.svg", 7))


async def test_list_names_pages_by_name_with_a_cursor(client: Any) -> None:
    names = ["e.txt", "a.txt", "d.txt", "b.txt", "c.txt"]
    for name in names:
        await run(client.save_version(APP, name, name))
    await run(client.save_version(APP, "b.txt", "again"))
    await run(client.save_version("elsewhere", "z.txt", "another app"))

    first = await run(client.list_names(APP, limit=2))
    assert isinstance(first, NamePage)
    assert [n.name for n in first.items] == ["a.txt", "b.txt"] and first.next_cursor
    second = await run(client.list_names(APP, limit=2, cursor=first.next_cursor))
    third = await run(client.list_names(APP, limit=2, cursor=second.next_cursor))
    assert [n.name for n in second.items + third.items] == ["c.txt", "d.txt", "e.txt"]
    assert third.next_cursor is None

    b = first.items[1]
    assert isinstance(b, NameInfo)
    assert (b.scope, b.latest_version, b.versions) == ("user", 1, 2)
    every = await collect(client.iter_names(APP, limit=2))
    assert [n.name for n in every] == sorted(names)
    assert [n.name for n in await collect(client.iter_names("elsewhere"))] == ["z.txt"]
    assert (await run(client.list_names("no.such.app"))).items == []


async def test_user_wide_names_are_shared_by_sessions_and_session_names_are_not(connect: Any, service: Any) -> None:
    tenant = new_name("t")
    in_a = connect(token=service.token(tenant, sub="u-1", session="s-a"))
    in_b = connect(token=service.token(tenant, sub="u-1", session="s-b"))
    other_user = connect(token=service.token(tenant, sub="u-2", session="s-a"))

    shared = await run(in_a.save_version(APP, "profile.json", b'{"tz":"UTC"}', user_wide=True))
    draft = await run(in_a.save_version(APP, "draft.md", b"only in s-a"))
    assert (shared.scope.user_id, shared.scope.session_id) == ("u-1", None)
    assert (draft.scope.user_id, draft.scope.session_id) == ("u-1", "s-a")

    # Session B sees the user-wide name, not session A's.
    seen = await run(in_b.load_version(APP, "profile.json", user_wide=True))
    assert seen is not None and seen.data == b'{"tz":"UTC"}'
    assert await run(in_b.load_version(APP, "draft.md")) is None
    assert await run(in_b.load_version(APP, "profile.json")) is None  # not a session name
    assert (await run(in_b.list_names(APP))).items == []
    assert [(n.name, n.scope) for n in (await run(in_b.list_names(APP, user_wide=True))).items] == [
        ("profile.json", "user")
    ]
    # B's own draft.md is another name, with its own numbers.
    assert (await run(in_b.save_version(APP, "draft.md", b"only in s-b"))).version == 0
    assert (await run(in_a.save_version(APP, "draft.md", b"s-a again"))).version == 1
    # B adds a version to the shared name; A reads it as the latest.
    await run(in_b.save_version(APP, "profile.json", b'{"tz":"CET"}', user_wide=True))
    latest = await run(in_a.load_version(APP, "profile.json", user_wide=True))
    assert latest is not None and (latest.ref.version, latest.data) == (1, b'{"tz":"CET"}')

    # Another user sees nothing of u-1's, and cannot name u-1.
    assert await run(other_user.load_version(APP, "profile.json", user_wide=True)) is None
    assert await run(other_user.list_versions(APP, "draft.md")) == []
    with pytest.raises(ForbiddenError):
        await run(other_user.load_version(APP, "profile.json", user_id="u-1", user_wide=True))
    # A session-bound token cannot name another session either.
    with pytest.raises(ForbiddenError):
        await run(in_b.load_version(APP, "draft.md", session_id="s-a"))

    # A tenant-wide token names the user and the session, per call or by the client's scope.
    tenant_wide = connect(token=service.token(tenant))
    a_draft = await run(tenant_wide.load_version(APP, "draft.md", user_id="u-1", session_id="s-a"))
    assert a_draft is not None and a_draft.data == b"s-a again"
    as_b = connect(token=service.token(tenant), scope=Scope(user="u-1", session="s-b"))
    assert (await run(as_b.load_version(APP, "draft.md"))).data == b"only in s-b"
    assert [n.name for n in await collect(as_b.iter_names(APP, user_wide=True))] == ["profile.json"]
    # user_wide wins over the client's session.
    assert (await run(as_b.version_ref(APP, "profile.json", user_wide=True))).version == 1


async def test_delete_then_save_starts_again_at_zero(client: Any) -> None:
    for text in ("a", "b", "c"):
        await run(client.save_version(APP, "scratch", text))
    assert await run(client.delete_name(APP, "scratch")) is True
    assert await run(client.delete_name(APP, "scratch")) is False
    assert await run(client.load_version(APP, "scratch")) is None
    assert await run(client.list_versions(APP, "scratch")) == []
    assert (await run(client.list_names(APP))).items == []
    again = await run(client.save_version(APP, "scratch", "fresh"))
    assert again.version == 0
    assert [r.version for r in await run(client.list_versions(APP, "scratch"))] == [0]


async def test_a_bad_app_name_or_version_is_a_bad_request_as_elsewhere(client: Any) -> None:
    # The class every other call raises for a 400.
    with pytest.raises(BadRequestError):
        await run(client.list(cursor="not-a-cursor"))
    calls = [
        lambda: client.save_version("bad app!", "n", b"x"),
        lambda: client.load_version("bad app!", "n"),
        lambda: client.version_ref("no/slashes", "n"),
        lambda: client.list_versions("bad app!", "n"),
        lambda: client.list_names("bad app!"),
        lambda: client.delete_name("bad app!", "n"),
        lambda: client.version_url("bad app!", "n"),
        lambda: client.save_version(APP, "", b"x"),
        lambda: client.save_version(APP, "tab\there", b"x"),
        lambda: client.load_version(APP, "n" * 513),
        lambda: client.delete_name(APP, "nul\x00"),
        lambda: client.load_version(APP, "n", -1),
        lambda: client.list_names(APP, limit=0),
        lambda: client.list_names(APP, cursor="not-a-cursor"),
    ]
    for call in calls:
        with pytest.raises(BadRequestError) as caught:
            await run(call())
        assert (caught.value.code, caught.value.status) == ("bad_request", 400)
    with pytest.raises(BadRequestError) as caught:
        await run(client.save_version("bad app!", "n", b"x"))
    assert "app" in caught.value.message
    with pytest.raises(BadRequestError):
        async with opened(client.stream_version(APP, "n\x01")):
            pass
    # Apps a URL path cannot carry (it drops "." and ".." segments) are refused before sending.
    for app in ("", ".", ".."):
        for call in (lambda: client.load_version(app, "n"), lambda: client.list_names(app)):
            with pytest.raises(BadRequestError) as caught:
                await run(call())
            assert caught.value.status is None and "app" in caught.value.message


async def test_parallel_saves_get_every_number_exactly_once(client: Any, is_async: bool) -> None:
    count = 20
    if is_async:
        refs = await asyncio.gather(*(client.save_version(APP, "busy", f"save {i}") for i in range(count)))
    else:
        with ThreadPoolExecutor(max_workers=count) as pool:
            refs = list(pool.map(lambda i: client.save_version(APP, "busy", f"save {i}"), range(count)))
    assert sorted(r.version for r in refs) == list(range(count))
    versions = await run(client.list_versions(APP, "busy"))
    assert [r.version for r in versions] == list(range(count))
    # Each number holds the bytes its save sent.
    by_version = {r.version: r.sha256 for r in refs}
    assert all(by_version[r.version] == r.sha256 for r in versions)
    info = (await run(client.list_names(APP))).items
    assert [(n.name, n.latest_version, n.versions) for n in info] == [("busy", count - 1, count)]


async def test_a_save_sends_the_puts_headers_and_the_scope_in_the_query(connect: Any) -> None:
    sent: list[httpx.Request] = []
    ref = {
        "id": "app_" + "a" * 24,
        "mimeType": "application/pdf",
        "sizeBytes": 1,
        "sha256": "a" * 64,
        "namespace": "app",
        "scope": {"tenantId": "t", "userId": "u-1", "sessionId": "s-1"},
        "createdAt": "2026-01-01T00:00:00.000Z",
        "name": "Q3 report/final.pdf",
        "version": 4,
    }
    link_answer = {
        "url": "http://store.test/v1/download/x",
        "fetchMode": "proxy",
        "urlExpiresAt": "2026-01-01T00:15:00.000Z",
        "mimeType": "application/pdf",
        "sizeBytes": 1,
    }

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if request.method == "GET":
            return httpx.Response(200, json={"items": []})
        if request.url.path.endswith("/url"):
            return httpx.Response(200, json=link_answer)
        return httpx.Response(201, json=ref)

    transport = httpx.MockTransport(answer)
    client = connect(base_url="http://store.test", token="tok", transport=transport, scope=Scope(session="s-1"))
    saved = await run(
        client.save_version(
            "my app",
            "Q3 report/final.pdf",
            b"x",
            user_id="u-1",
            mime_type="application/pdf",
            filename="Übersicht.pdf",
            meta={"n": 1},
            source={"tool": "export"},
            ttl="never",
            sha256="a" * 64,
        )
    )
    assert (saved.name, saved.version) == ("Q3 report/final.pdf", 4)
    await run(client.list_names("my app", user_wide=True, limit=5, cursor="c1"))
    await run(client.version_url("my app", "n", 3, mode="direct"))
    save, names, link = sent
    assert (save.method, save.url.raw_path.split(b"?")[0]) == ("POST", b"/v1/names/my%20app")
    assert dict(save.url.params) == {"name": "Q3 report/final.pdf", "user": "u-1", "session": "s-1"}
    h = save.headers
    assert (h["authorization"], h["content-type"]) == ("Bearer tok", "application/pdf")
    assert h["x-artifact-filename"] == "UTF-8''%C3%9Cbersicht.pdf"
    assert (json.loads(h["x-artifact-meta"]), json.loads(h["x-artifact-source"])) == ({"n": 1}, {"tool": "export"})
    assert (h["x-artifact-ttl"], h["x-artifact-sha256"]) == ("never", "a" * 64)
    # The app is the namespace, and the scope travels in the query.
    assert not {"x-artifact-namespace", "x-artifact-session", "x-artifact-user"} & set(h.keys())
    assert (names.method, names.url.path) == ("GET", "/v1/names/my app")
    assert dict(names.url.params) == {"scope": "user", "limit": "5", "cursor": "c1"}
    assert (link.method, link.url.path) == ("POST", "/v1/names/my app/url")
    assert dict(link.url.params) == {"name": "n", "session": "s-1", "version": "3"}
    assert json.loads(link.content) == {"mode": "direct"}


NAMED_REF = {
    "id": "app_" + "a" * 24,
    "mimeType": "text/plain",
    "sizeBytes": 10,
    "sha256": "a" * 64,
    "namespace": "app",
    "scope": {"tenantId": "t"},
    "createdAt": "2026-01-01T00:00:00.000Z",
    "name": "n",
    "version": 3,
}


async def test_the_latest_is_read_by_its_number_and_a_range_ignored_on_the_way_is_cut_here(connect: Any) -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if request.url.path.endswith("/meta"):
            return httpx.Response(200, json=NAMED_REF)
        return httpx.Response(200, content=b"0123456789")  # the whole body, Range ignored

    client = connect(base_url="http://store.test", transport=httpx.MockTransport(answer))
    async with opened(client.stream_version("app", "n", range=(2, 4), user_wide=True)) as version:
        assert version.ref.version == 3
        assert await read_all(version.chunks) == b"234"
    meta, content = sent
    assert dict(meta.url.params) == {"name": "n", "scope": "user"}
    assert dict(content.url.params) == {"name": "n", "scope": "user", "version": "3"}
    assert content.headers["range"] == "bytes=2-4"
    loaded = await run(client.load_version("app", "n"))
    assert loaded is not None and loaded.data == b"0123456789"
    assert dict(sent[-1].url.params) == {"name": "n", "version": "3"}


async def test_a_save_is_retried_after_503_as_a_put_is(connect: Any) -> None:
    bodies: list[bytes] = []
    answers = [
        httpx.Response(503, headers={"Retry-After": "0"}, json={"code": "backend_unavailable", "message": "later"}),
        httpx.Response(201, json=NAMED_REF),
    ]

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(request.read())
        return answers.pop(0)

    client = connect(base_url="http://store.test", transport=httpx.MockTransport(answer), retry_base_delay=0.001)
    saved = await run(client.save_version("app", "n", b"0123456789"))
    assert (saved.name, saved.version) == ("n", 3)
    assert bodies == [b"0123456789", b"0123456789"]


async def test_a_save_is_not_retried_after_a_connection_error(connect: Any) -> None:
    # The first attempt may have committed a version: another try would add one more.
    calls: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise httpx.ConnectError("connection reset", request=request)

    client = connect(base_url="http://store.test", transport=httpx.MockTransport(answer), retry_base_delay=0.001)
    with pytest.raises(BackendUnavailableError):
        await run(client.save_version("app", "n", b"0123456789"))
    assert len(calls) == 1
