"""Direct uploads: large bodies of known size go straight to the blob store when the service offers it."""

from __future__ import annotations

import hashlib
import io
import json
from typing import Any

import httpx
import pytest
from support import recording, run

from artifact_store_client import BackendUnavailableError, BadRequestError

BIG = bytes(range(256)) * 64  # 16 KiB


async def test_the_fs_driver_offers_none_so_the_put_goes_through_the_service(connect: Any) -> None:
    client = connect(direct_upload_above_bytes=1024)
    assert client.direct_uploads_offered is None
    ref = await run(client.put(BIG, filename="big.bin"))
    assert client.direct_uploads_offered is False
    assert (ref.size_bytes, ref.filename) == (len(BIG), "big.bin")
    assert await run(client.get(ref.id)) == BIG


async def test_begin_upload_on_the_fs_driver_says_why(client: Any) -> None:
    with pytest.raises(BadRequestError) as caught:
        await run(client.begin_upload(size_bytes=len(BIG), sha256=hashlib.sha256(BIG).hexdigest()))
    assert caught.value.details["reason"] == "direct_uploads_unavailable"


REF = {
    "id": "art_" + hashlib.sha256(BIG).hexdigest()[:24],
    "mimeType": "application/zip",
    "sizeBytes": len(BIG),
    "sha256": hashlib.sha256(BIG).hexdigest(),
    "namespace": "art",
    "scope": {"tenantId": "t", "sessionId": "s1"},
    "createdAt": "2026-01-01T00:00:00.000Z",
}
BLOB_URL = "https://blobs.test/staging/up_1?X-Amz-Signature=abc%2Fdef"


class BlobStore:
    """The service (begin, complete) and a presigned blob store, as one mock transport."""

    def __init__(self, blob_status: int = 200) -> None:
        self.requests: list[httpx.Request] = []
        self.blob_status = blob_status
        self.stored = b""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        route = (request.method, request.url.host, request.url.path)
        if route == ("POST", "store.test", "/v1/uploads"):
            ticket = {
                "uploadId": "up_1",
                "url": BLOB_URL,
                "method": "PUT",
                "headers": {"Content-Type": "application/zip"},
                "expiresAt": "2026-01-01T01:00:00.000Z",
            }
            return httpx.Response(201, json=ticket)
        if route == ("PUT", "blobs.test", "/staging/up_1"):
            self.stored = request.read()
            return httpx.Response(self.blob_status)
        if route == ("POST", "store.test", "/v1/uploads/up_1/complete"):
            return httpx.Response(201, json=REF)
        return httpx.Response(404, json={"code": "not_found", "message": f"No route {route}"})


@pytest.mark.parametrize("kind", ["bytes", "path", "file"])
async def test_a_large_body_goes_straight_to_the_blob_store(connect: Any, tmp_file: Any, kind: str) -> None:
    store = BlobStore()
    client = connect(base_url="http://store.test", transport=httpx.MockTransport(store), direct_upload_above_bytes=1024)
    data: Any = {"bytes": BIG, "path": tmp_file(BIG), "file": io.BytesIO(BIG)}[kind]
    ref = await run(client.put(data, mime_type="application/zip", filename="big.zip", session="s1", ttl=60))
    assert ref.id == REF["id"]
    assert client.direct_uploads_offered is True
    begin, blob, complete = store.requests
    assert json.loads(begin.read()) == {
        "sizeBytes": len(BIG),
        "sha256": hashlib.sha256(BIG).hexdigest(),
        "mimeType": "application/zip",
        "filename": "big.zip",
        "ttl": 60,
    }
    assert begin.headers["x-artifact-session"] == "s1"
    # The presigned URL is used as given, with the ticket's headers and no token.
    assert str(blob.url) == BLOB_URL
    assert "authorization" not in blob.headers
    assert blob.headers["content-type"] == "application/zip"
    assert store.stored == BIG
    assert complete.headers["authorization"].startswith("Bearer ")


async def test_small_and_unsized_bodies_go_through_the_service(connect: Any) -> None:
    sent: list[httpx.Request] = []
    transport = recording(sent, lambda: httpx.Response(201, json=REF))
    client = connect(base_url="http://store.test", transport=transport, direct_upload_above_bytes=1024)
    await run(client.put(BIG[:1024]))
    await run(client.put(iter([BIG])))
    assert [r.url.path for r in sent] == ["/v1/artifacts", "/v1/artifacts"]


async def test_a_blob_store_refusal_is_backend_unavailable(connect: Any) -> None:
    store = BlobStore(blob_status=403)
    client = connect(base_url="http://store.test", transport=httpx.MockTransport(store), direct_upload_above_bytes=1024)
    with pytest.raises(BackendUnavailableError, match="blob store refused"):
        await run(client.put(BIG))
    assert [r.method for r in store.requests] == ["POST", "PUT"]
