"""put_file of a big file on a real S3 (the run's Ceph RGW or MinIO): straight to the bucket in
parts, each retried on its own, and an interrupted upload resumed by a new client that sends only the
parts the bucket lacks.

The service takes parts above 8 MiB, in parts of 5 MiB (S3's smallest), so a 23 MiB file is five
parts. Like test_direct_uploads_s3.py, these skip without PYTHON_TESTS_S3 (no S3 server here).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import MiB, Service, Wire, close, run, start_service

from artifact_store_client import ArtifactStoreClient, AsyncArtifactStoreClient, FileResumeRecords, UploadProgress

S3 = json.loads(os.environ["PYTHON_TESTS_S3"]) if os.environ.get("PYTHON_TESTS_S3") else None
pytestmark = pytest.mark.skipif(S3 is None, reason="no S3 server for this run (PYTHON_TESTS_S3 is not set)")

PART = 5 * MiB


class Stop(Exception):
    """Raised from on_progress: the upload stops there, as a killed process would."""


@pytest.fixture(scope="module")
def on_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    assert S3 is not None
    running = start_service(
        tmp_path_factory.mktemp("s3-parts"),
        {
            "ARTIFACT_STORE_BLOB_DRIVER": "s3",
            "ARTIFACT_STORE_S3_BUCKET": S3["bucket"],
            "ARTIFACT_STORE_S3_ENDPOINT": S3["endpoint"],
            "ARTIFACT_STORE_S3_REGION": S3["region"],
            "ARTIFACT_STORE_S3_ACCESS_KEY_ID": S3["accessKeyId"],
            "ARTIFACT_STORE_S3_SECRET_ACCESS_KEY": S3["secretAccessKey"],
            "ARTIFACT_STORE_S3_FORCE_PATH_STYLE": "true" if S3["forcePathStyle"] else "false",
            "ARTIFACT_STORE_MULTIPART_UPLOAD_BYTES": str(8 * MiB),
            "ARTIFACT_STORE_UPLOAD_PART_BYTES": str(PART),
        },
    )
    yield running
    running.stop()


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("big") / "parts.bin"
    path.write_bytes(os.urandom(23 * MiB + 777))
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(params=["sync", "async"])
async def s3_connect(request: pytest.FixtureRequest, on_s3: Service) -> Any:
    """Makes clients of one kind for the service on S3, closed after the test."""
    made: list[Any] = []

    def make(**options: Any) -> Any:
        options.setdefault("token", on_s3.token())
        kind = ArtifactStoreClient if request.param == "sync" else AsyncArtifactStoreClient
        client = kind(on_s3.url, **options)
        made.append(client)
        return client

    make.is_async = request.param == "async"  # type: ignore[attr-defined]
    yield make
    for client in made:
        await close(client)


def part_puts(wire: Wire, part: int | None = None) -> int:
    """PUTs of parts to the bucket (of part `part`, or of any)."""
    return sum(
        1
        for method, url, _ in wire.sent
        if method == "PUT"
        and url.params.get("uploadId")
        and (part is None or url.params.get("partNumber") == str(part))
    )


async def read_back_sha256(client: Any, artifact_id: str) -> str:
    return hashlib.sha256(await run(client.get(artifact_id))).hexdigest()


async def test_a_big_file_goes_to_the_bucket_in_parts(s3_connect: Any, big_file: tuple[Path, str]) -> None:
    path, sha256 = big_file
    size = path.stat().st_size
    wire = Wire()
    client = s3_connect(transport=wire.transport(s3_connect.is_async))
    seen: list[UploadProgress] = []
    ref = await run(client.put_file(path, mime_type="application/octet-stream", on_progress=seen.append))
    assert (ref.size_bytes, ref.sha256, ref.filename) == (size, sha256, "parts.bin")
    assert client.direct_uploads_offered is True
    assert part_puts(wire) == 5
    assert wire.count("POST", "/parts") == 5
    # No token goes to the bucket.
    assert not [r for r in wire.requests if r.method == "PUT" and "authorization" in r.headers]
    assert [p.sent_bytes for p in seen][0] == 0 and seen[-1].sent_bytes == size
    assert sorted(p.sent_bytes for p in seen) == [p.sent_bytes for p in seen]
    assert await read_back_sha256(client, ref.id) == sha256


async def test_an_interrupted_upload_sends_only_the_missing_parts(
    s3_connect: Any, on_s3: Service, big_file: tuple[Path, str], tmp_path: Path
) -> None:
    path, sha256 = big_file
    size = path.stat().st_size
    token = on_s3.token()
    records = tmp_path / "uploads.json"

    def stop_after_two_parts(progress: UploadProgress) -> None:
        if progress.sent_bytes >= 2 * PART:
            raise Stop

    first = s3_connect(token=token)
    with pytest.raises(Stop):
        await run(
            first.put_file(path, resume=FileResumeRecords(records), part_concurrency=1, on_progress=stop_after_two_parts)
        )
    [(key, upload_id)] = json.loads(records.read_text()).items()
    assert key == f"{on_s3.url} {sha256} {size}"
    status = httpx.get(f"{on_s3.url}/v1/uploads/{upload_id}", headers={"Authorization": f"Bearer {token}"}).json()
    assert [p["partNumber"] for p in status["parts"]] == [1, 2]

    wire = Wire()
    second = s3_connect(token=token, transport=wire.transport(s3_connect.is_async))
    seen: list[int] = []
    ref = await run(
        second.put_file(path, resume=FileResumeRecords(records), on_progress=lambda p: seen.append(p.sent_bytes))
    )
    assert part_puts(wire) == 3
    assert part_puts(wire, 1) == part_puts(wire, 2) == 0
    assert wire.count("POST", "/v1/uploads") == 4  # three parts' URLs, then complete
    assert seen[0] == 2 * PART and seen[-1] == size
    assert (ref.size_bytes, ref.sha256) == (size, sha256)
    assert json.loads(records.read_text()) == {}
    assert await read_back_sha256(second, ref.id) == sha256


async def test_a_part_the_bucket_refuses_once_is_sent_again(s3_connect: Any, big_file: tuple[Path, str]) -> None:
    path, sha256 = big_file

    refused: list[httpx.URL] = []

    def refuse_part_two_once(request: httpx.Request, seen: int) -> int | None:
        if request.method == "PUT" and request.url.params.get("partNumber") == "2" and not refused:
            refused.append(request.url)
            return 503
        return None

    wire = Wire(refuse_part_two_once)
    client = s3_connect(transport=wire.transport(s3_connect.is_async), retry_base_delay=0.01)
    ref = await run(client.put_file(path))
    assert ref.sha256 == sha256
    assert part_puts(wire, 2) == 2
    assert part_puts(wire) == 6
    assert await read_back_sha256(client, ref.id) == sha256


async def test_a_record_of_an_upload_that_is_gone_starts_a_new_one(
    s3_connect: Any, on_s3: Service, big_file: tuple[Path, str], tmp_path: Path
) -> None:
    path, sha256 = big_file
    size = path.stat().st_size
    records = FileResumeRecords(tmp_path / "uploads.json")
    records.set(f"{on_s3.url} {sha256} {size}", "up_0123456789abcdef")
    wire = Wire()
    client = s3_connect(transport=wire.transport(s3_connect.is_async))
    ref = await run(client.put_file(path, resume=records))
    assert ref.sha256 == sha256
    assert wire.count("GET", "/v1/uploads/up_0123456789abcdef") == 1
    assert part_puts(wire) == 5
    assert json.loads(records.path.read_text()) == {}


async def test_put_of_bytes_above_the_threshold_goes_in_parts_too(s3_connect: Any) -> None:
    data = os.urandom(9 * MiB)
    wire = Wire()
    client = s3_connect(transport=wire.transport(s3_connect.is_async))
    ref = await run(client.put(data, filename="nine.bin"))
    assert ref.sha256 == hashlib.sha256(data).hexdigest()
    assert part_puts(wire) == 2
    assert await run(client.get(ref.id)) == data
