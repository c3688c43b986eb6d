"""Retries: replayable requests are sent again after 429, 503 and connection errors; one-shot bodies never."""

from __future__ import annotations

import io
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from support import run

from artifact_store_client import BackendUnavailableError, RateLimitedError
from artifact_store_client._retry import RetryPolicy, retry_after_seconds

REF = {
    "id": "art_" + "a" * 24,
    "mimeType": "application/octet-stream",
    "sizeBytes": 5,
    "sha256": "a" * 64,
    "namespace": "art",
    "scope": {"tenantId": "t"},
    "createdAt": "2026-01-01T00:00:00.000Z",
}


class Recorder:
    """A mock service that answers from a script and keeps every request with its body."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        self.bodies: list[bytes] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.bodies.append(request.read())
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


def mock(connect: Any, recorder: Recorder, **options: Any) -> Any:
    options.setdefault("retry_base_delay", 0.001)
    return connect(base_url="http://store.test", transport=httpx.MockTransport(recorder), **options)


def busy(status: int = 503, retry_after: str = "0") -> httpx.Response:
    code = "rate_limited" if status == 429 else "backend_unavailable"
    return httpx.Response(status, headers={"Retry-After": retry_after}, json={"code": code, "message": "later"})


@pytest.mark.parametrize("status", [429, 503])
async def test_a_replayable_put_is_retried_until_it_lands(connect: Any, tmp_file: Any, status: int) -> None:
    path = tmp_file(b"hello")
    for body in (b"hello", "hello", path, io.BytesIO(b"hello")):
        recorder = Recorder(busy(status), busy(status), httpx.Response(201, json=REF))
        client = mock(connect, recorder)
        ref = await run(client.put(body))
        assert ref.id == REF["id"]
        assert recorder.bodies == [b"hello"] * 3


async def test_a_connection_error_is_retried(connect: Any) -> None:
    recorder = Recorder(httpx.ConnectError("refused"), httpx.Response(200, content=b"bytes"))
    client = mock(connect, recorder)
    assert await run(client.get(REF["id"])) == b"bytes"
    assert len(recorder.requests) == 2


async def test_retries_stop_after_the_last_and_say_when_to_come_back(connect: Any) -> None:
    recorder = Recorder(busy(429, "7"))
    client = mock(connect, recorder, retries=2, retry_max_delay=0.001)
    with pytest.raises(RateLimitedError) as caught:
        await run(client.put(b"hello"))
    assert caught.value.retry_after == 7
    assert len(recorder.requests) == 3


async def test_an_iterator_body_is_sent_once(connect: Any, is_async: bool) -> None:
    recorder = Recorder(busy(503), httpx.Response(201, json=REF))
    client = mock(connect, recorder)
    with pytest.raises(BackendUnavailableError) as caught:
        await run(client.put(iter([b"hel", b"lo"])))
    assert caught.value.retry_after == 0
    assert recorder.bodies == [b"hello"]


async def test_a_connection_error_of_an_iterator_body_surfaces_at_once(connect: Any) -> None:
    recorder = Recorder(httpx.WriteError("reset"), httpx.Response(201, json=REF))
    client = mock(connect, recorder)
    with pytest.raises(BackendUnavailableError, match="closed before the whole body was sent"):
        await run(client.put(iter([b"hello"])))
    assert len(recorder.requests) == 1


async def test_other_errors_are_not_retried(connect: Any) -> None:
    recorder = Recorder(httpx.Response(400, json={"code": "bad_request", "message": "no"}))
    client = mock(connect, recorder)
    with pytest.raises(Exception, match="no"):
        await run(client.put(b"hello"))
    assert len(recorder.requests) == 1


async def test_the_token_is_asked_before_every_request(connect: Any, is_async: bool) -> None:
    issued: list[str] = []

    def token() -> str:
        issued.append(f"token-{len(issued)}")
        return issued[-1]

    async def async_token() -> str:
        return token()

    recorder = Recorder(busy(503), httpx.Response(200, content=b"x"))
    client = mock(connect, recorder, token=async_token if is_async else token, headers={"X-Extra": "1"})
    await run(client.get(REF["id"]))
    assert [r.headers["authorization"] for r in recorder.requests] == ["Bearer token-0", "Bearer token-1"]
    assert all(r.headers["x-extra"] == "1" for r in recorder.requests)


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_seconds("3") == 3
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None
    later = datetime.now(timezone.utc) + timedelta(seconds=30)
    assert 25 < retry_after_seconds(format_datetime(later, usegmt=True)) <= 30  # type: ignore[operator]
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0


def test_waits_are_capped_and_jittered() -> None:
    policy = RetryPolicy(retries=3, base_delay=1, max_delay=10)
    assert policy.wait_after(3600, 0) == 10
    assert policy.wait_after(2, 0) == 2
    for attempt in range(8):
        ceiling = min(10, 2**attempt)
        assert ceiling / 2 <= policy.backoff(attempt) <= ceiling


# Against a service that lets each tenant one request a second.


async def test_a_real_429_carries_retry_after(connect: Any, limited: Any) -> None:
    client = connect(base_url=limited.url, token=limited.token(), retries=0)
    with pytest.raises(RateLimitedError) as caught:
        for _ in range(10):
            await run(client.put(b"again and again"))
    err = caught.value
    assert err.status == 429
    assert err.retry_after is not None and err.retry_after >= 1
    assert err.details["reason"] == "tenant_requests"


class Watching(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """The real transports, noting each answer's status."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self._sync = httpx.HTTPTransport()
        self._async = httpx.AsyncHTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._sync.handle_request(request)
        self.statuses.append(response.status_code)
        return response

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._async.handle_async_request(request)
        self.statuses.append(response.status_code)
        return response

    def close(self) -> None:
        self._sync.close()

    async def aclose(self) -> None:
        await self._async.aclose()


async def test_puts_wait_out_a_real_429(connect: Any, limited: Any) -> None:
    watching = Watching()
    client = connect(base_url=limited.url, token=limited.token(), retries=5, transport=watching)
    refs = [await run(client.put(f"put {i}".encode())) for i in range(3)]
    assert len({ref.id for ref in refs}) == 3
    assert 429 in watching.statuses
    assert watching.statuses[-1] == 201
