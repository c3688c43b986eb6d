"""Every error the real service can be made to answer arrives as its own exception class."""

from __future__ import annotations

import hashlib
import socket
from typing import Any

import httpx
import pytest
from support import new_name, run

from artifact_store_client import (
    ArtifactStoreError,
    BackendUnavailableError,
    BadRequestError,
    ChecksumMismatchError,
    ForbiddenError,
    NotFoundError,
    PayloadTooLargeError,
    QuotaExceededError,
    UnauthorizedError,
    mint_hs256_token,
)


async def test_bad_namespace_is_a_bad_request(client: Any) -> None:
    with pytest.raises(BadRequestError) as caught:
        await run(client.put(b"x", namespace="no/slashes"))
    err = caught.value
    assert (err.code, err.status) == ("bad_request", 400)
    assert "namespace" in err.message
    assert isinstance(err, ArtifactStoreError)


async def test_values_that_cannot_travel_in_a_header_are_refused_before_sending(client: Any) -> None:
    with pytest.raises(BadRequestError) as caught:
        await run(client.put(b"x", session="séance"))
    assert caught.value.status is None
    with pytest.raises(BadRequestError):
        await run(client.put(b"x", ttl=1.5))


async def test_a_bad_token_is_unauthorized(connect: Any, service: Any) -> None:
    for token in ("not-a-jwt", mint_hs256_token("another-secret", tenant="t", kid="py")):
        client = connect(token=token)
        with pytest.raises(UnauthorizedError) as caught:
            await run(client.put(b"x"))
        assert caught.value.status == 401


async def test_no_token_is_unauthorized(connect: Any) -> None:
    client = connect(token=None)
    with pytest.raises(UnauthorizedError):
        await run(client.list())


async def test_a_session_bound_token_cannot_name_another_session(connect: Any, service: Any) -> None:
    client = connect(token=service.token(session="s-mine"))
    ref = await run(client.put(b"mine"))
    assert ref.scope.session_id == "s-mine"
    with pytest.raises(ForbiddenError) as caught:
        await run(client.put(b"theirs", session="s-theirs"))
    assert caught.value.status == 403


async def test_a_read_only_token_cannot_put(connect: Any, service: Any) -> None:
    client = connect(token=service.token(perms=("read",)))
    with pytest.raises(ForbiddenError):
        await run(client.put(b"x"))


async def test_a_link_to_a_missing_artifact_is_not_found(client: Any) -> None:
    with pytest.raises(NotFoundError) as caught:
        await run(client.url("art_" + "f" * 24))
    assert (caught.value.code, caught.value.status) == ("not_found", 404)


async def test_a_full_tenant_refuses_puts_with_quota_exceeded(connect: Any, service: Any) -> None:
    # The "tight" tenant may hold 64 bytes (conftest.POLICIES).
    client = connect(token=service.token("tight"))
    held = await run(client.put(b"a" * 40, session=new_name("s")))
    try:
        with pytest.raises(QuotaExceededError) as caught:
            await run(client.put(b"b" * 40, session=new_name("s")))
    finally:
        assert await run(client.delete(held.id))
    err = caught.value
    assert (err.code, err.status) == ("quota_exceeded", 409)
    assert err.details["scope"] == "tenant"


async def test_a_body_over_the_limit_is_too_large(connect: Any, service: Any) -> None:
    # The "small" tenant's artifacts may be 1 KiB (conftest.POLICIES).
    client = connect(token=service.token("small"))
    with pytest.raises(PayloadTooLargeError) as caught:
        await run(client.put(b"x" * 4096))
    assert caught.value.status == 413


async def test_a_wrong_sha256_is_a_checksum_mismatch(client: Any) -> None:
    with pytest.raises(ChecksumMismatchError) as caught:
        await run(client.put(b"these bytes", sha256=hashlib.sha256(b"other bytes").hexdigest()))
    assert caught.value.status == 422
    assert (await run(client.list())).items == []


async def test_an_unreachable_service_is_backend_unavailable(connect: Any) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = connect(base_url=f"http://127.0.0.1:{port}", retries=1, retry_base_delay=0.01)
    with pytest.raises(BackendUnavailableError) as caught:
        await run(client.get("art_" + "0" * 24))
    err = caught.value
    assert err.status is None
    assert "Could not reach" in err.message and "after 2 attempts" in err.message


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (502, b"<html><body>Bad gateway</body></html>", BackendUnavailableError),
        (404, b"Not Found", NotFoundError),
        (401, b"<html>login</html>", UnauthorizedError),
        (413, b"", PayloadTooLargeError),
        (400, b'{"code": "made_up", "message": "?"}', BadRequestError),
    ],
)
async def test_answers_that_are_not_the_error_shape_still_raise_by_status(
    connect: Any, status: int, body: bytes, expected: type[ArtifactStoreError]
) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(status, content=body))
    client = connect(base_url="http://store.test", transport=transport, retries=0)
    with pytest.raises(expected) as caught:
        await run(client.url("art_" + "0" * 24))
    err = caught.value
    assert err.status == status
    assert f"POST /v1/artifacts/art_{'0' * 24}/url answered HTTP {status}" in err.message
    if body:
        assert body.decode()[:10].split()[0] in err.message


async def test_an_answer_that_is_not_a_ref_is_refused(connect: Any) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(201, json={"id": "x", "sizeBytes": "big"}))
    client = connect(base_url="http://store.test", transport=transport)
    with pytest.raises(BackendUnavailableError, match="did not match ArtifactRef: field mimeType"):
        await run(client.put(b"x"))
