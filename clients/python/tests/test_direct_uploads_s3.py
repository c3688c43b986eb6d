"""Direct uploads against the service on a real S3 (the run's Ceph RGW or MinIO): the bytes go
straight to the bucket through a presigned PUT, and the service checks them before it commits.

test/python-client.test.ts creates a bucket on the run's S3 server and names it in
PYTHON_TESTS_S3; without it (no S3 server on this machine) these tests skip, and under CI that
wrapper fails instead.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support import MiB, Service, close, run, start_service

from artifact_store_client import (
    ArtifactStoreClient,
    AsyncArtifactStoreClient,
    BadRequestError,
)

S3 = json.loads(os.environ["PYTHON_TESTS_S3"]) if os.environ.get("PYTHON_TESTS_S3") else None
pytestmark = pytest.mark.skipif(S3 is None, reason="no S3 server for this run (PYTHON_TESTS_S3 is not set)")

BODY = os.urandom(3 * MiB + 17)


@pytest.fixture(scope="module")
def on_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    assert S3 is not None
    running = start_service(
        tmp_path_factory.mktemp("s3"),
        {
            "ARTIFACT_STORE_BLOB_DRIVER": "s3",
            "ARTIFACT_STORE_S3_BUCKET": S3["bucket"],
            "ARTIFACT_STORE_S3_ENDPOINT": S3["endpoint"],
            "ARTIFACT_STORE_S3_REGION": S3["region"],
            "ARTIFACT_STORE_S3_ACCESS_KEY_ID": S3["accessKeyId"],
            "ARTIFACT_STORE_S3_SECRET_ACCESS_KEY": S3["secretAccessKey"],
            "ARTIFACT_STORE_S3_FORCE_PATH_STYLE": "true" if S3["forcePathStyle"] else "false",
        },
    )
    yield running
    running.stop()


@pytest.fixture(params=["sync", "async"])
async def s3_client(request: pytest.FixtureRequest, on_s3: Service) -> Any:
    kind = ArtifactStoreClient if request.param == "sync" else AsyncArtifactStoreClient
    client = kind(on_s3.url, on_s3.token(), scope={"session": "s-1"}, direct_upload_above_bytes=MiB)
    yield client
    await close(client)


@pytest.mark.parametrize("kind", ["bytes", "path"])
async def test_a_large_put_goes_straight_to_the_bucket(s3_client: Any, tmp_path: Any, kind: str) -> None:
    data: Any = BODY
    if kind == "path":
        data = tmp_path / "big.bin"
        data.write_bytes(BODY)
    ref = await run(s3_client.put(data, mime_type="application/octet-stream", filename="big.bin"))
    assert s3_client.direct_uploads_offered is True
    assert (ref.size_bytes, ref.sha256) == (len(BODY), hashlib.sha256(BODY).hexdigest())
    assert ref.scope.session_id == "s-1"
    assert await run(s3_client.get(ref.id)) == BODY


async def test_begin_put_and_complete_by_hand_and_wrong_bytes_are_refused(s3_client: Any) -> None:
    good = os.urandom(2 * MiB)
    ticket = await run(s3_client.begin_upload(size_bytes=len(good), sha256=hashlib.sha256(good).hexdigest()))
    assert ticket.method == "PUT"
    # The PUT is signed with the declared sha256: the bucket itself refuses other bytes of the same
    # size, and completing finds nothing uploaded.
    assert ticket.headers["x-amz-content-sha256"] == hashlib.sha256(good).hexdigest()
    put = httpx.put(ticket.url, content=os.urandom(len(good)), headers=ticket.headers, timeout=60)
    assert put.status_code == 400
    assert "XAmzContentSHA256Mismatch" in put.text
    with pytest.raises(BadRequestError):
        await run(s3_client.complete_upload(ticket.upload_id))
    assert not await run(s3_client.exists("art_" + hashlib.sha256(good).hexdigest()[:24]))

    ticket = await run(s3_client.begin_upload(size_bytes=len(good), sha256=hashlib.sha256(good).hexdigest()))
    assert httpx.put(ticket.url, content=good, headers=ticket.headers, timeout=60).status_code == 200
    ref = await run(s3_client.complete_upload(ticket.upload_id))
    assert await run(s3_client.get(ref.id)) == good


async def test_a_link_can_be_direct_from_the_bucket(s3_client: Any) -> None:
    ref = await run(s3_client.put(b"direct link bytes", filename="d.txt"))
    link = await run(s3_client.url(ref.id, mode="direct"))
    assert link.fetch_mode == "direct"
    assert httpx.get(link.url, timeout=30).content == b"direct link bytes"


async def test_begin_upload_refuses_a_sha256_that_is_not_one(s3_client: Any) -> None:
    with pytest.raises(BadRequestError):
        await run(s3_client.begin_upload(size_bytes=10, sha256="not-a-sha256"))
