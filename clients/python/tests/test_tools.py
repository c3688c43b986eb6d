"""The artifact tools a model calls: the service's text for read, search and query, compact JSON for
list and info, a sentence for url, and every refusal as text the model reads."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from support import new_name, recording, run

from artifact_store_client.tools import ArtifactTool, artifact_tools, format_bytes


def tools_of(client: Any, **options: Any) -> dict[str, ArtifactTool]:
    return {tool.name: tool for tool in artifact_tools(client, **options)}


async def call(tool: ArtifactTool, args: Any, *, sync: bool = False) -> str:
    return tool.call_sync(args) if sync else await tool(args)


def test_the_tools_have_the_typescript_names_and_arguments() -> None:
    tools = artifact_tools(object())
    assert [t.name for t in tools] == [
        "artifact_read",
        "artifact_search",
        "artifact_query",
        "artifact_list",
        "artifact_info",
        "artifact_url",
    ]
    arguments = {t.name: (list(t.parameters["properties"]), t.parameters.get("required", [])) for t in tools}
    assert arguments == {
        "artifact_read": (["id", "offset", "limit", "page", "entry", "column"], ["id"]),
        "artifact_search": (
            ["id", "pattern", "regex", "ignoreCase", "context", "maxMatches", "offset", "page", "entry"],
            ["id", "pattern"],
        ),
        "artifact_query": (["id", "path", "entry"], ["id", "path"]),
        "artifact_list": (["mimePrefix", "q", "sort", "limit", "cursor"], []),
        "artifact_info": (["id"], ["id"]),
        "artifact_url": (["id", "mode", "expiresIn"], ["id"]),
    }
    for tool in tools:
        assert tool.parameters["type"] == "object"
        assert tool.description
        assert tool.spec() == {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
        json.dumps(tool.spec())
    # Each list has its own schemas: changing one leaves the next list's alone.
    tools[0].parameters["properties"]["id"]["description"] = "changed"
    assert artifact_tools(object())[0].parameters["properties"]["id"]["description"] != "changed"


def test_sizes_read_as_the_service_writes_them() -> None:
    cases = {0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1280: "1.3 KiB", 49356: "48 KiB", 10752: "11 KiB"}
    cases.update({5 * 1024**4: "5.0 TiB", 3 * 1024**5: "3072 TiB", 300 * 1024**2: "300 MiB"})
    assert {n: format_bytes(n) for n in cases} == cases


async def test_arguments_a_tool_cannot_take_are_refused_as_text(connect: Any, is_async: bool) -> None:
    # Awaited on either client; the sync client's call_sync too.
    for sync in [False] if is_async else [False, True]:
        await refusals_as_text(connect, sync)


async def refusals_as_text(connect: Any, sync: bool) -> None:
    sent: list[httpx.Request] = []
    client = connect(base_url="http://store.test", transport=recording(sent, lambda: httpx.Response(500)))
    tools = tools_of(client)
    refusals = {
        "artifact_read": [{}, {"id": 7}, {"id": "a", "offset": "3"}, {"id": "a", "limit": 2.5}, "{not json", "[1]"],
        "artifact_search": [{"id": "a"}, {"id": "a", "pattern": "x", "regex": "true"}],
        "artifact_query": [{"path": "$"}],
        "artifact_url": [{"id": "a", "mode": "bogus"}, {"id": "a", "expiresIn": True}],
        "artifact_info": [None],
        "artifact_list": [{"limit": "10"}],
    }
    for name, cases in refusals.items():
        for args in cases:
            text = await call(tools[name], args, sync=sync)
            assert text.startswith("Error (bad_request): "), (name, args, text)
            assert f"{name} takes {{" in text
    assert sent == []
    needs = await call(tools["artifact_read"], {}, sync=sync)
    assert needs.startswith('Error (bad_request): artifact_read needs "id"')
    text = await call(tools["artifact_url"], {"id": "a", "mode": "bogus"}, sync=sync)
    assert '"mode" must be "proxy" or "direct", not "bogus"' in text


async def test_call_sync_is_for_the_sync_client(connect: Any, is_async: bool) -> None:
    tool = tools_of(connect())["artifact_info"]
    assert tool.is_async is is_async
    if is_async:
        with pytest.raises(TypeError, match="await"):
            tool.call_sync({"id": "a"})


async def test_view_tools_pass_their_arguments_and_answer_the_services_text(connect: Any) -> None:
    sent: list[httpx.Request] = []
    head = {"id": "art_x", "mimeType": "text/plain", "sizeBytes": 3, "view": "text"}
    answers = iter(
        [
            {**head, "text": "1\tabc\n(end)", "offset": 2, "lines": ["abc"], "totalLines": 2, "nextOffset": None},
            {
                **head,
                "text": "2: abc",
                "pattern": "b",
                "regex": False,
                "ignoreCase": True,
                "totalMatches": 1,
                "returnedMatches": 1,
                "lines": [{"line": 2, "text": "abc", "match": True}],
                "nextOffset": None,
            },
            {
                **head,
                "text": "$['a']: 1",
                "path": "$.a",
                "totalMatches": 1,
                "matches": [{"path": "$['a']", "value": 1}],
            },
        ]
    )
    transport = recording(sent, lambda: httpx.Response(200, json=next(answers)))
    client = connect(base_url="http://store.test", transport=transport, scope={"session": "s-9"})
    tools = tools_of(client, budget=1234)
    read = await tools["artifact_read"]({"id": "art_x", "offset": 2, "limit": 5, "column": 1, "page": 1, "entry": "e"})
    found = await tools["artifact_search"](
        json.dumps({"id": "art_x", "pattern": "b", "ignoreCase": True, "maxMatches": 3, "context": 1, "offset": 2})
    )
    queried = await tools["artifact_query"]({"id": "art_x", "path": "$.a", "entry": "d.json", "unknown": 1})
    assert (read, found, queried) == ("1\tabc\n(end)", "2: abc", "$['a']: 1")
    params = [dict(r.url.params) for r in sent]
    assert params == [
        {"offset": "2", "limit": "5", "column": "1", "page": "1", "entry": "e", "budget": "1234"},
        {
            "pattern": "b",
            "regex": "false",
            "ignoreCase": "true",
            "context": "1",
            "maxMatches": "3",
            "offset": "2",
            "budget": "1234",
        },
        {"path": "$.a", "entry": "d.json", "budget": "1234"},
    ]
    assert [r.url.path.rsplit("/", 1)[-1] for r in sent] == ["text", "search", "query"]
    assert all(r.headers["x-artifact-session"] == "s-9" for r in sent)


async def test_list_info_and_url_answer_what_the_model_reads(connect: Any) -> None:
    client = connect()
    tools = tools_of(client)
    pdf = await run(
        client.put(b"%PDF-1.4 " * 200, mime_type="application/pdf", filename="Résumé.pdf", source={"tool": "export"})
    )
    note = await run(client.put("a note", ttl=600))

    listed = await tools["artifact_list"]({})
    assert listed == json.dumps(json.loads(listed), separators=(",", ":"), ensure_ascii=False)
    assert "Résumé.pdf" in listed
    page = json.loads(listed)
    assert list(page) == ["artifacts", "nextCursor"]
    assert page["nextCursor"] is None
    # Newest first; two puts in one millisecond may come in either order.
    assert sorted(a["id"] for a in page["artifacts"]) == sorted([note.id, pdf.id])
    by_id = {a["id"]: a for a in page["artifacts"]}
    assert by_id[pdf.id] == {
        "id": pdf.id,
        "mimeType": "application/pdf",
        "sizeBytes": 1800,
        "sha256": pdf.sha256,
        "filename": "Résumé.pdf",
        "source": {"tool": "export"},
    }
    assert list(by_id[pdf.id]) == ["id", "mimeType", "sizeBytes", "sha256", "filename", "source"]
    assert list(by_id[note.id]) == ["id", "mimeType", "sizeBytes", "sha256"]

    first = json.loads(await tools["artifact_list"]({"limit": 1}))
    assert [a["id"] for a in first["artifacts"]] == [page["artifacts"][0]["id"]] and first["nextCursor"]
    rest = json.loads(await tools["artifact_list"]({"limit": 1, "cursor": first["nextCursor"]}))
    assert [a["id"] for a in rest["artifacts"]] == [page["artifacts"][1]["id"]]
    pdfs = json.loads(await tools["artifact_list"]({"mimePrefix": "application/pdf"}))
    assert [a["id"] for a in pdfs["artifacts"]] == [pdf.id]

    info = await tools["artifact_info"]({"id": note.id})
    held = json.loads(info)
    assert list(held) == ["id", "mimeType", "sizeBytes", "sha256", "uri", "createdAt", "expiresAt"]
    assert held["uri"] == f"artifact://{note.id}"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", held["createdAt"])
    assert held["expiresAt"] is not None and held["expiresAt"] > held["createdAt"]
    assert info == json.dumps(held, separators=(",", ":"), ensure_ascii=False)

    link_text = await tools["artifact_url"]({"id": pdf.id, "expiresIn": 300})
    shown = re.fullmatch(
        rf"Download link for {re.escape(pdf.id)} \(1\.8 KiB application/pdf\), valid until (\S+Z): (\S+)", link_text
    )
    assert shown, link_text
    async with httpx.AsyncClient() as browser:
        fetched = await browser.get(shown.group(2))
    assert fetched.content == b"%PDF-1.4 " * 200


async def test_missing_artifacts_are_refused_as_text(client: Any) -> None:
    tools = tools_of(client)
    missing = "art_" + "f" * 24
    service_says = (
        f'Artifact "{missing}" was not found in your scope. Check the id, or whether it expired or was deleted.'
    )
    assert await tools["artifact_info"]({"id": missing}) == f"Error (not_found): {service_says}"
    assert await tools["artifact_url"]({"id": missing}) == f"Error (not_found): {service_says}"
    for name, args in (
        ("artifact_read", {"id": missing}),
        ("artifact_search", {"id": missing, "pattern": "x"}),
        ("artifact_query", {"id": missing, "path": "$"}),
    ):
        assert await tools[name](args) == f"Error (not_found): {service_says}", name


async def test_view_tools_answer_the_services_text(client: Any, is_async: bool) -> None:
    text = "\n".join(f"line {i}" + (" match" if i % 10 == 0 else "") for i in range(1, 301))
    ref = await run(client.put(text))
    doc = await run(client.put(json.dumps({"items": [{"n": i} for i in range(5)]}), mime_type="application/json"))
    tools = tools_of(client, budget=3000)
    ways = [False] if is_async else [False, True]
    for sync in ways:
        read = await call(tools["artifact_read"], {"id": ref.id, "offset": 5, "limit": 20}, sync=sync)
        assert read == (await run(client.read(ref.id, offset=5, limit=20, budget=3000))).text
        assert "line 5" in read and len(read) <= 3000
        found = await call(tools["artifact_search"], {"id": ref.id, "pattern": "MATCH", "ignoreCase": True}, sync=sync)
        assert found == (await run(client.search(ref.id, "MATCH", ignore_case=True, budget=3000))).text
        assert "line 10 match" in found
        queried = await call(tools["artifact_query"], {"id": doc.id, "path": "$.items[?@.n > 2].n"}, sync=sync)
        assert queried == (await run(client.query(doc.id, "$.items[?@.n > 2].n", budget=3000))).text

    blob = await run(client.put(bytes(range(256)) * 8, mime_type="application/octet-stream"))
    refused = await tools["artifact_read"]({"id": blob.id})
    assert refused.startswith("Error (unsupported_type): ") and len(refused) > len("Error (unsupported_type): ")
    invalid = await tools["artifact_query"]({"id": doc.id, "path": "$.items[?"})
    assert invalid.startswith("Error (bad_request): ")
    past = await tools["artifact_read"]({"id": ref.id, "offset": 5000})
    assert past.startswith("Error (bad_request): ")


async def test_a_session_bound_clients_tools_see_its_session_only(connect: Any, service: Any) -> None:
    tenant = new_name("t")
    mine = tools_of(connect(token=service.token(tenant, session="s-mine")))
    theirs_client = connect(token=service.token(tenant, session="s-theirs"))
    ref = await run(theirs_client.put("their notes\nline two"))
    assert "their notes" in await tools_of(theirs_client)["artifact_read"]({"id": ref.id})
    for name, args in (
        ("artifact_read", {"id": ref.id}),
        ("artifact_search", {"id": ref.id, "pattern": "notes"}),
        ("artifact_info", {"id": ref.id}),
    ):
        assert (await mine[name](args)).startswith("Error (not_found): "), name
    assert json.loads(await mine["artifact_list"]({}))["artifacts"] == []
