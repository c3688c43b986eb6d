"""put_file of a big file on the fs driver, which takes no direct uploads: tus through the service,
in checksummed chunks, continued after a dropped connection, and resumed by a new client from a
resume record."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import MiB, Service, Wire, run

from artifact_store_client import FileResumeRecords, UploadProgress


class Stop(Exception):
    """Raised from on_progress: the upload stops there, as a killed process would."""


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("big") / "big.bin"
    path.write_bytes(os.urandom(20 * MiB + 12345))
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def tus_patches(wire: Wire) -> list[int]:
    """The sizes of the tus PATCHes that went out."""
    return [size for method, url, size in wire.sent if method == "PATCH" and "/v1/tus/" in url.path]


async def read_back_sha256(client: Any, artifact_id: str) -> str:
    return hashlib.sha256(await run(client.get(artifact_id))).hexdigest()


async def test_a_big_file_goes_over_tus_in_chunks(connect: Any, is_async: bool, big_file: tuple[Path, str]) -> None:
    path, sha256 = big_file
    size = path.stat().st_size
    wire = Wire()
    client = connect(transport=wire.transport(is_async))
    seen: list[UploadProgress] = []
    ref = await run(
        client.put_file(path, namespace="bench", meta={"run": 1}, tus_chunk_bytes=8 * MiB, on_progress=seen.append)
    )
    assert (ref.size_bytes, ref.sha256, ref.filename, ref.namespace) == (size, sha256, "big.bin", "bench")
    assert ref.meta == {"run": 1}
    assert client.direct_uploads_offered is False
    assert tus_patches(wire) == [8 * MiB, 8 * MiB, size - 16 * MiB]
    assert wire.count("POST", "/v1/artifacts") == 0
    assert [p.sent_bytes for p in seen] == [0, 8 * MiB, 16 * MiB, size]
    assert {p.total_bytes for p in seen} == {size}
    assert await read_back_sha256(client, ref.id) == sha256


async def test_an_interrupted_upload_resumes_from_a_new_client(
    connect: Any, is_async: bool, service: Service, big_file: tuple[Path, str], tmp_path: Path
) -> None:
    path, sha256 = big_file
    size = path.stat().st_size
    token = service.token()
    records = tmp_path / "state" / "uploads.json"

    def stop_after_two_chunks(progress: UploadProgress) -> None:
        if progress.sent_bytes >= 8 * MiB:
            raise Stop

    first = connect(token=token)
    with pytest.raises(Stop):
        await run(
            first.put_file(
                path, resume=FileResumeRecords(records), tus_chunk_bytes=4 * MiB, on_progress=stop_after_two_chunks
            )
        )
    kept = json.loads(records.read_text())
    [(key, upload)] = kept.items()
    assert key == f"{service.url} tus {sha256} {size}"
    assert upload.startswith("/v1/tus/up_")
    # The service holds the two chunks.
    head = httpx.head(
        service.url + upload, headers={"Authorization": f"Bearer {token}", "Tus-Resumable": "1.0.0"}, timeout=30
    )
    assert int(head.headers["upload-offset"]) == 8 * MiB

    wire = Wire()
    second = connect(token=token, transport=wire.transport(is_async))
    seen: list[int] = []
    ref = await run(
        second.put_file(
            path,
            resume=FileResumeRecords(records),
            tus_chunk_bytes=4 * MiB,
            on_progress=lambda p: seen.append(p.sent_bytes),
        )
    )
    assert seen[0] == 8 * MiB and seen[-1] == size
    assert sum(tus_patches(wire)) == size - 8 * MiB
    assert wire.count("POST", "/v1/tus") == 0
    assert (ref.size_bytes, ref.sha256) == (size, sha256)
    assert json.loads(records.read_text()) == {}
    assert await read_back_sha256(second, ref.id) == sha256


async def test_a_dropped_connection_goes_on_from_where_the_service_stands(
    connect: Any, is_async: bool, big_file: tuple[Path, str]
) -> None:
    path, sha256 = big_file
    size = path.stat().st_size

    def cut_the_second_patch(request: httpx.Request, seen: int) -> str | None:
        return "cut" if request.method == "PATCH" and seen == 1 else None

    wire = Wire(cut_the_second_patch)
    client = connect(transport=wire.transport(is_async), retry_base_delay=0.01)
    ref = await run(client.put_file(path, tus_chunk_bytes=8 * MiB))
    assert (ref.size_bytes, ref.sha256) == (size, sha256)
    # The cut PATCH had arrived: a HEAD said so, and nothing was sent twice.
    assert wire.count("HEAD", "/v1/tus/") == 1
    assert tus_patches(wire) == [8 * MiB, 8 * MiB, size - 16 * MiB]
    assert await read_back_sha256(client, ref.id) == sha256


async def test_a_refused_chunk_is_sent_again(connect: Any, is_async: bool, big_file: tuple[Path, str]) -> None:
    path, sha256 = big_file

    def refuse_the_first_patch(request: httpx.Request, seen: int) -> int | None:
        return 503 if request.method == "PATCH" and seen == 0 else None

    wire = Wire(refuse_the_first_patch)
    client = connect(transport=wire.transport(is_async), retry_base_delay=0.01)
    ref = await run(client.put_file(path, tus_chunk_bytes=16 * MiB))
    assert ref.sha256 == sha256
    assert len(tus_patches(wire)) == 3


async def test_a_record_of_an_upload_that_is_gone_starts_a_new_one(
    connect: Any, service: Service, big_file: tuple[Path, str], tmp_path: Path
) -> None:
    path, sha256 = big_file
    size = path.stat().st_size
    records = FileResumeRecords(tmp_path / "uploads.json")
    records.set(f"{service.url} tus {sha256} {size}", "/v1/tus/up_0123456789abcdef")
    client = connect()
    ref = await run(client.put_file(path, resume=records))
    assert ref.sha256 == sha256
    assert records.get(f"{service.url} tus {sha256} {size}") is None


async def test_a_small_file_is_one_put(connect: Any, is_async: bool, tmp_file: Any) -> None:
    wire = Wire()
    client = connect(transport=wire.transport(is_async))
    seen: list[UploadProgress] = []
    ref = await run(client.put_file(tmp_file(b"small", "s.txt"), resume=False, on_progress=seen.append))
    assert (ref.filename, ref.mime_type, ref.size_bytes) == ("s.txt", "text/plain", 5)
    assert [(m, u.path) for m, u, _ in wire.sent] == [("POST", "/v1/artifacts")]
    assert [(p.sent_bytes, p.total_bytes) for p in seen] == [(5, 5)]


def test_resume_records_live_in_the_state_folder_unless_moved(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ARTIFACT_STORE_RESUME_FILE", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    records = FileResumeRecords()
    assert records.path == tmp_path / "state" / "artifact-store" / "uploads.json"
    assert records.get("k") is None
    records.set("k", "up_1")
    records.set("j", "/v1/tus/up_2")
    records.delete("k")
    assert json.loads(records.path.read_text()) == {"j": "/v1/tus/up_2"}
    assert [p.name for p in records.path.parent.iterdir()] == ["uploads.json"]
    monkeypatch.setenv("ARTIFACT_STORE_RESUME_FILE", str(tmp_path / "elsewhere.json"))
    assert FileResumeRecords().path == tmp_path / "elsewhere.json"
