"""What a model reads of a stored artifact: read, search and query, against the real service, checked
against the same answers computed here from the bytes that were stored."""

from __future__ import annotations

import json
import random
import re
import time
from typing import Any

import httpx
import pytest
from support import recording, run

from artifact_store_client import (
    ArtifactStoreError,
    BadRequestError,
    NotFoundError,
    QueryResult,
    ReadResult,
    SearchResult,
    UnprocessableError,
    UnsupportedTypeError,
)
from artifact_store_client.errors import error_for

LINES = 10_000
NEEDLE = "needle"


def numbered_text() -> str:
    """10,000 lines of varied length, some empty, some not ASCII; a needle every so often; one line
    far longer than any answer holds; no line end after the last line."""
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "épsilon", "ζeta", "日本語", "tab\there", "code-125", "x"]
    lines = []
    for i in range(1, LINES + 1):
        if i % 500 == 250:
            lines.append("")
            continue
        body = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        if i % 97 == 0:
            body += f" {NEEDLE}"
        if i % 211 == 0:
            body = f"Needle-{i} " + body
        lines.append(f"line {i}: {body}")
    lines[4321] = "long:" + "".join(rng.choice("abcdefghij ") for _ in range(150_000))
    return "\n".join(lines)


async def read_whole(client: Any, artifact_id: str, **options: Any) -> tuple[list[str], list[ReadResult]]:
    """Every line of the view, read answer after answer as a model goes on: offset, then column."""
    out: list[str] = []
    answers: list[ReadResult] = []
    offset: int | None = 1
    column: int | None = None
    while offset is not None:
        answer = await run(client.read(artifact_id, offset=offset, column=column, **options))
        assert isinstance(answer, ReadResult)
        assert answer.offset == offset
        assert answer.lines, f"an answer at line {offset} held nothing"
        first, *rest = answer.lines
        if column is not None and column > 1:
            assert answer.column == column
            out[-1] += first
        else:
            out.append(first)
        out.extend(rest)
        answers.append(answer)
        assert len(answers) < 5_000, "the reads never reached the end"
        offset, column = answer.next_offset, answer.next_column
    return out, answers


async def test_reading_page_after_page_gives_back_the_stored_text_exactly(client: Any) -> None:
    text = numbered_text()
    ref = await run(client.put(text, mime_type="text/plain", filename="lines.txt"))
    lines, answers = await read_whole(client, ref.id, limit=700)
    assert "\n".join(lines) == text
    first = answers[0]
    assert (first.id, first.view, first.size_bytes, first.filename) == (ref.id, "text", ref.size_bytes, "lines.txt")
    assert first.mime_type.startswith("text/plain")
    assert first.total_lines == LINES
    assert all(len(a.lines) <= 700 for a in answers)
    # The model reads `text`: the lines it holds, numbered, and how to go on.
    assert first.text and "line 1:" in first.text
    assert answers[-1].next_offset is None
    # The 150,000-character line cannot fit one answer: it was continued by column.
    assert any(a.next_column is not None for a in answers)


async def test_a_budget_bounds_what_the_model_reads(client: Any) -> None:
    text = numbered_text()
    ref = await run(client.put(text, mime_type="text/plain"))
    answer = await run(client.read(ref.id, offset=100, budget=2_000))
    assert len(answer.text) <= 2_000
    assert answer.lines and answer.lines[0] == text.split("\n")[99]
    assert answer.next_offset is not None and answer.next_offset > 100


async def test_search_finds_the_lines_python_finds(client: Any) -> None:
    text = numbered_text()
    ref = await run(client.put(text, mime_type="text/plain"))
    split = text.split("\n")

    async def every_match(pattern: str, **options: Any) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] = []
        offset: int | None = None
        while True:
            answer = await run(client.search(ref.id, pattern, max_matches=50, offset=offset, **options))
            assert isinstance(answer, SearchResult)
            assert answer.pattern == pattern
            held = [(line.line, line.text) for line in answer.lines if line.match]
            assert len(held) == answer.returned_matches
            found.extend(held)
            if answer.next_offset is None:
                return found
            assert answer.next_offset > (offset or 0)
            offset = answer.next_offset

    truth = [(i + 1, line) for i, line in enumerate(split) if NEEDLE in line]
    assert len(truth) > 50
    assert await every_match(NEEDLE) == truth
    first = await run(client.search(ref.id, NEEDLE))
    assert first.total_matches == len(truth)
    assert (first.regex, first.ignore_case) == (False, False)
    assert first.text

    folded = [(i + 1, line) for i, line in enumerate(split) if NEEDLE in line.lower()]
    assert len(folded) > len(truth)
    assert await every_match(NEEDLE.upper(), ignore_case=True) == folded

    pattern = r"^line \d+7: .*\bcode-\d{3}\b"
    by_re = [(i + 1, line) for i, line in enumerate(split) if re.search(pattern, line)]
    assert by_re
    assert await every_match(pattern, regex=True) == by_re
    # A dot is any character in a regex, itself in plain text.
    assert await every_match("code.125") == []


async def test_search_shows_context_lines_around_each_match(client: Any) -> None:
    text = "\n".join(f"row {i}" + (" hit" if i in (10, 11, 30) else "") for i in range(1, 51))
    ref = await run(client.put(text))
    answer = await run(client.search(ref.id, "hit", context=2))
    shown = [(line.line, line.match) for line in answer.lines]
    expected = [(n, n in (10, 11, 30)) for n in [8, 9, 10, 11, 12, 13, 28, 29, 30, 31, 32]]
    assert shown == expected
    assert (answer.total_matches, answer.returned_matches, answer.next_offset) == (3, 3, None)
    assert all(line.text == f"row {line.line}" + (" hit" if line.match else "") for line in answer.lines)


async def test_query_selects_what_json_loads_finds(client: Any) -> None:
    doc = {
        "repo": "acme/widgets",
        "issues": [
            {
                "number": n,
                "title": f"Issue {n}: {'crash' if n % 7 == 0 else 'typo'} in módulo {n % 5}",
                "state": "open" if n % 3 else "closed",
                "labels": ["bug"] if n % 7 == 0 else [],
            }
            for n in range(1, 121)
        ],
    }
    ref = await run(client.put(json.dumps(doc), mime_type="application/json"))

    answer = await run(client.query(ref.id, "$.issues[?@.state == 'open'].title"))
    assert isinstance(answer, QueryResult)
    truth = [(i, issue["title"]) for i, issue in enumerate(doc["issues"]) if issue["state"] == "open"]
    assert answer.total_matches == len(truth)
    assert 0 < len(answer.matches) <= len(truth)
    held = [(m.path, m.value) for m in answer.matches]
    assert held == [(f"$['issues'][{i}]['title']", title) for i, title in truth[: len(held)]]
    assert answer.text and answer.total_is_lower_bound is False

    one = await run(client.query(ref.id, "$.issues[41]"))
    assert one.total_matches == 1
    assert one.matches[0].value == doc["issues"][41] and one.matches[0].cut is None

    numbers = await run(client.query(ref.id, "$..number"))
    assert numbers.total_matches == len(doc["issues"])

    labelled = await run(client.query(ref.id, "$.issues[?length(@.labels) > 0].number"))
    assert [m.value for m in labelled.matches] == [i["number"] for i in doc["issues"] if i["labels"]]

    nothing = await run(client.query(ref.id, "$.pulls[*]"))
    assert (nothing.total_matches, nothing.matches) == (0, [])


async def test_view_errors_arrive_as_their_classes(client: Any) -> None:
    missing = "art_" + "0" * 24
    for call in (
        lambda: client.read(missing),
        lambda: client.search(missing, "x"),
        lambda: client.query(missing, "$"),
    ):
        with pytest.raises(NotFoundError) as caught:
            await run(call())
        assert (caught.value.code, caught.value.status) == ("not_found", 404)
        # The answer for a missing id, not the one for a route that does not exist.
        assert caught.value.message.startswith(f'Artifact "{missing}" was not found in your scope.')

    binary = bytes(range(256)) * 64
    blob = await run(client.put(binary, mime_type="application/octet-stream"))
    with pytest.raises(UnsupportedTypeError) as unsupported:
        await run(client.read(blob.id))
    assert (unsupported.value.code, unsupported.value.status) == ("unsupported_type", 415)
    assert unsupported.value.message

    doc = await run(client.put(json.dumps({"a": [1, 2, 3]}), mime_type="application/json"))
    with pytest.raises(BadRequestError) as invalid:
        await run(client.query(doc.id, "$.a[?"))
    assert (invalid.value.code, invalid.value.status) == ("bad_request", 400)

    text = await run(client.put("one\ntwo\nthree"))
    with pytest.raises(BadRequestError):
        await run(client.read(text.id, offset=1_000))
    with pytest.raises(BadRequestError):
        await run(client.search(text.id, "(unclosed", regex=True))


async def test_a_pathological_regex_gets_an_answer_quickly(connect: Any) -> None:
    # One attempt, and not the default minute: a service that hangs on it fails here, fast.
    client = connect(timeout=20, retries=0)
    ref = await run(client.put("a" * 50_000 + "b\n" + "a" * 30 + "!"))
    started = time.monotonic()
    try:
        answer = await run(client.search(ref.id, "(a+)+$", regex=True))
    except BadRequestError:
        pass
    else:
        assert isinstance(answer, SearchResult)
        # Only the second line ends in a's: the first ends in "b", the last in "!".
        assert answer.total_matches == 0
    assert time.monotonic() - started < 10


async def test_a_session_bound_client_cannot_read_another_sessions_artifact(connect: Any, service: Any) -> None:
    tenant = f"t-views-{random.randrange(10**9)}"
    mine = connect(token=service.token(tenant, session="s-mine"))
    theirs = connect(token=service.token(tenant, session="s-theirs"))
    ref = await run(mine.put('{"secret": 1}', mime_type="application/json"))
    assert (await run(mine.read(ref.id))).lines == ['{"secret": 1}']
    for call in (
        lambda: theirs.read(ref.id),
        lambda: theirs.search(ref.id, "secret"),
        lambda: theirs.query(ref.id, "$.secret"),
    ):
        with pytest.raises(NotFoundError) as caught:
            await run(call())
        # The same answer as for an id that does not exist.
        assert caught.value.message.startswith(f'Artifact "{ref.id}" was not found in your scope.')
    # A tenant-wide client reads it only when it names the session that holds it.
    wide = connect(token=service.token(tenant))
    with pytest.raises(NotFoundError):
        await run(wide.read(ref.id, session="s-theirs"))
    assert (await run(wide.query(ref.id, "$.secret", session="s-mine"))).matches[0].value == 1


# What is sent and how answers are read, without the service.

ANSWER_HEAD = {"id": "art_" + "a" * 24, "mimeType": "text/plain", "sizeBytes": 12, "view": "text", "text": "1\tx"}


async def test_view_calls_send_their_options_and_the_scope(connect: Any) -> None:
    sent: list[httpx.Request] = []
    answers = iter(
        [
            {**ANSWER_HEAD, "offset": 3, "column": 5, "lines": ["x"], "totalLines": 9, "nextOffset": None},
            {
                **ANSWER_HEAD,
                "pattern": "a.b",
                "regex": True,
                "ignoreCase": False,
                "totalMatches": 1,
                "returnedMatches": 1,
                "lines": [{"line": 4, "text": "a-b", "match": True, "page": 2}],
                "nextOffset": 5,
                "nextPage": 2,
                "view": "pdf",
                "page": 2,
                "pageCount": 3,
            },
            {
                **ANSWER_HEAD,
                "path": "$.a",
                "totalMatches": 100_000,
                "totalIsLowerBound": True,
                "matches": [{"path": "$['a']", "value": None}],
            },
        ]
    )
    transport = recording(sent, lambda: httpx.Response(200, json=next(answers)))
    client = connect(base_url="http://store.test", token="tok", transport=transport, scope={"session": "s-1"})
    read = await run(client.read("odd/id", offset=3, column=5, limit=10, page=1, entry="a b.txt", budget=900))
    found = await run(client.search("art_x", "a.b", regex=True, context=1, max_matches=7, page=2, user="u-1"))
    queried = await run(client.query("art_x", "$.a", entry="data.json", trace="tr"))

    assert sent[0].url.raw_path.startswith(b"/v1/artifacts/odd%2Fid/text?")
    assert dict(sent[0].url.params) == {
        "offset": "3",
        "column": "5",
        "limit": "10",
        "page": "1",
        "entry": "a b.txt",
        "budget": "900",
    }
    assert sent[1].url.path == "/v1/artifacts/art_x/search"
    assert dict(sent[1].url.params) == {
        "pattern": "a.b",
        "regex": "true",
        "ignoreCase": "false",
        "context": "1",
        "maxMatches": "7",
        "page": "2",
    }
    assert sent[2].url.path == "/v1/artifacts/art_x/query"
    assert dict(sent[2].url.params) == {"path": "$.a", "entry": "data.json"}
    assert [r.headers.get("x-artifact-session") for r in sent] == ["s-1"] * 3
    assert (sent[1].headers.get("x-artifact-user"), sent[2].headers.get("x-artifact-trace")) == ("u-1", "tr")
    assert all(r.headers["authorization"] == "Bearer tok" for r in sent)

    assert (read.offset, read.column, read.lines, read.total_lines, read.next_offset) == (3, 5, ["x"], 9, None)
    assert (read.text, read.next_column, read.page) == ("1\tx", None, None)
    assert (found.view, found.page, found.page_count, found.next_offset, found.next_page) == ("pdf", 2, 3, 5, 2)
    assert found.lines[0].line == 4 and found.lines[0].page == 2 and found.lines[0].match is True
    assert (queried.total_matches, queried.total_is_lower_bound) == (100_000, True)
    assert (queried.matches[0].path, queried.matches[0].value, queried.matches[0].cut) == ("$['a']", None, None)


async def test_options_of_the_wrong_type_are_refused_before_sending(connect: Any) -> None:
    sent: list[httpx.Request] = []
    transport = recording(sent, lambda: httpx.Response(500))
    client = connect(base_url="http://store.test", transport=transport)
    for call in (
        lambda: client.read("art_x", offset=1.5),
        lambda: client.read("art_x", limit=True),
        lambda: client.search("art_x", "x", regex="yes"),
        lambda: client.search("art_x", 42),
        lambda: client.query("art_x", "$", entry=3),
    ):
        with pytest.raises(BadRequestError) as caught:
            await run(call())
        assert caught.value.status is None
    assert sent == []
    with pytest.raises(BadRequestError, match="ignore_case"):
        await run(client.search("art_x", "x", ignore_case=1))


async def test_an_answer_that_is_not_a_view_is_not_taken_for_one(connect: Any) -> None:
    broken = {**ANSWER_HEAD, "offset": 1, "lines": "not a list", "totalLines": 1, "nextOffset": None}
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=broken))
    client = connect(base_url="http://store.test", transport=transport, retries=0)
    with pytest.raises(ArtifactStoreError, match="lines"):
        await run(client.read("art_x"))


def test_the_new_codes_have_their_classes() -> None:
    def answer(status: int, body: dict[str, Any] | bytes) -> ArtifactStoreError:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return error_for(status, content, {}, request="GET /v1/artifacts/x/text")

    unsupported = answer(415, {"code": "unsupported_type", "message": "No text view of a binary file."})
    assert isinstance(unsupported, UnsupportedTypeError)
    assert (unsupported.code, unsupported.status, unsupported.message) == (
        "unsupported_type",
        415,
        "No text view of a binary file.",
    )
    unprocessable = answer(422, {"code": "unprocessable", "message": "The PDF is malformed."})
    assert isinstance(unprocessable, UnprocessableError) and unprocessable.code == "unprocessable"
    # Without the service's body, 415 still says what it is; 422 could be either of two codes.
    assert isinstance(answer(415, b"<html>"), UnsupportedTypeError)
    assert type(answer(422, b"<html>")) is BadRequestError
