"""Big files: uploads that survive a failure, written once as operations (see _core) for both clients.

Where the service offers direct uploads (its s3 driver), the file goes straight to the bucket: one
PUT, or above the service's threshold in parts, each hashed, presigned with that hash and PUT on its
own (retried on its own), a few at a time. Where it does not (the fs driver), the file goes through
the service over tus 1.0, in chunks, each with its sha256; after a dropped connection or a 5xx the
client asks where the upload stands and sends the rest. Either way only the current part or chunk is
in memory, and a resume record, kept by the file's sha256 and size, lets the same file put again
(from this process or a new one) continue the upload instead of starting over.
"""

from __future__ import annotations

import base64
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from ._bodies import Body, BytesBody
from ._core import Answer, Call, HashBody, Op, ReadSlice, Sleep, Together, artifact_path, json_call
from ._headers import scope_headers, ttl_value
from .errors import (
    ArtifactStoreError,
    BackendUnavailableError,
    NotFoundError,
    RateLimitedError,
)
from .models import ArtifactRef, Scope, UploadTicket

MiB = 1024 * 1024
TUS_CHUNK_BYTES = 16 * MiB
PART_CONCURRENCY = 4
TUS = {"Tus-Resumable": "1.0.0"}
TUS_CHECKSUM_MISMATCH = 460


@dataclass(frozen=True)
class UploadProgress:
    """How far an upload has come: the bytes the bucket (or the service) acknowledged."""

    upload_id: str
    sent_bytes: int
    total_bytes: int


class ResumeRecords(Protocol):
    """Where unfinished uploads are remembered: by a key naming the service, the file's sha256 and
    its size, the upload to continue (an upload id, or a tus upload's path)."""

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, upload: str) -> None: ...

    def delete(self, key: str) -> None: ...


def default_resume_file() -> Path:
    """ARTIFACT_STORE_RESUME_FILE, else uploads.json in $XDG_STATE_HOME/artifact-store (default
    ~/.local/state): the file the CLI's `put --resume` keeps its records in too."""
    named = os.environ.get("ARTIFACT_STORE_RESUME_FILE")
    if named:
        return Path(named)
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "artifact-store" / "uploads.json"


class FileResumeRecords:
    """Resume records in a small JSON file, {key: upload}, rewritten whole on each change: written
    aside then renamed, so a process killed mid-write leaves the old records whole."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_resume_file()
        self._lock = threading.Lock()

    def _read(self) -> dict[str, str]:
        try:
            value = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(value, dict):
            return {}
        return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}

    def _write(self, records: Mapping[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, aside = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(json.dumps(dict(records), indent=2) + "\n")
            os.replace(aside, self.path)
        except BaseException:
            try:
                os.unlink(aside)
            except OSError:
                pass
            raise

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._read().get(key)

    def set(self, key: str, upload: str) -> None:
        with self._lock:
            self._write({**self._read(), key: upload})

    def delete(self, key: str) -> None:
        with self._lock:
            records = self._read()
            if records.pop(key, None) is not None:
                self._write(records)


@dataclass
class BigUpload:
    """How a big file goes: where its resume record is kept (None: nowhere), who hears of progress,
    how many parts go at once, and the size of a tus chunk."""

    records: ResumeRecords | None = None
    on_progress: Callable[[UploadProgress], None] | None = None
    part_concurrency: int = PART_CONCURRENCY
    tus_chunk_bytes: int = TUS_CHUNK_BYTES


def records_of(resume: bool | ResumeRecords | None) -> ResumeRecords | None:
    if resume is None or resume is False:
        return None
    if resume is True:
        return FileResumeRecords()
    if not all(callable(getattr(resume, name, None)) for name in ("get", "set", "delete")):
        raise TypeError("resume must be True, False, or resume records (get, set and delete: FileResumeRecords).")
    return resume


def commit_timeout(size_bytes: int) -> float:
    """Seconds to wait for an answer that commits an upload: the service reads it all again (parts)
    or moves it into the bucket (tus on s3). Two minutes, and one more second per 8 MiB."""
    return 120.0 + size_bytes / (8 * MiB)


class _Progress:
    """Acknowledged bytes of one upload; parts may report from several threads."""

    def __init__(self, upload_id: str, total: int, sent: int, callback: Callable[[UploadProgress], None] | None):
        self.upload_id = upload_id
        self.total = total
        self.sent = sent
        self._callback = callback
        self._lock = threading.Lock()

    def report(self) -> None:
        if self._callback is not None:
            self._callback(UploadProgress(self.upload_id, self.sent, self.total))

    def add(self, count: int) -> None:
        with self._lock:
            self.sent += count
            self.report()

    def at(self, offset: int) -> None:
        with self._lock:
            self.sent = offset
            self.report()


def upload_path(upload_id: str) -> str:
    return f"/v1/uploads/{quote(upload_id, safe='')}"


# Uploads in parts


def _status_of(value: Any) -> dict[str, Any]:
    """GET /v1/uploads/{id}, as far as resuming reads it."""
    if not isinstance(value, dict):
        raise ValueError("the answer: expected an object")
    parts = value.get("parts") or []
    if not isinstance(parts, list) or not all(
        isinstance(p, dict) and isinstance(p.get("partNumber"), int) and isinstance(p.get("sizeBytes"), int)
        for p in parts
    ):
        raise ValueError("field parts: expected a list of {partNumber, sizeBytes}")
    return value


def recorded_parts(
    records: ResumeRecords | None, key: str, size: int, sha256: str, scope: Scope
) -> Op[tuple[UploadTicket, list[dict[str, Any]]] | None]:
    """The upload in parts a resume record names, with the parts the bucket holds, when it is still
    open and for these bytes; else None (and a record that names nothing useful goes)."""
    upload_id = records.get(key) if records is not None else None
    if not upload_id:
        return None
    try:
        answer: Answer = yield Call("GET", upload_path(upload_id), headers=scope_headers(scope))
        status = answer.parse(_status_of, "UploadStatus")
    except NotFoundError:
        # Gone (completed, expired, aborted): a new upload starts.
        status = None
    if (
        status is not None
        and status.get("kind") == "multipart"
        and status.get("sizeBytes") == size
        and status.get("sha256") == sha256
        and isinstance(status.get("partSize"), int)
        and isinstance(status.get("partCount"), int)
        and status["partSize"] > 0
    ):
        ticket = UploadTicket(
            upload_id=upload_id,
            url="",
            kind="multipart",
            size_bytes=size,
            part_size=status["partSize"],
            part_count=status["partCount"],
        )
        return ticket, list(status.get("parts") or [])
    assert records is not None
    records.delete(key)
    return None


def put_parts(
    body: Body,
    ticket: UploadTicket,
    held: list[dict[str, Any]],
    scope: Scope,
    big: BigUpload,
    key: str | None,
) -> Op[ArtifactRef]:
    """Sends the parts the bucket does not hold yet, `part_concurrency` at a time, then completes;
    the resume record goes once the upload is over."""
    upload_id = ticket.upload_id
    size = body.size or 0
    part_size = ticket.part_size or 0
    count = ticket.part_count or 0

    def size_of(n: int) -> int:
        return min(part_size, size - (n - 1) * part_size)

    have = {p["partNumber"] for p in held if 1 <= p["partNumber"] <= count and p["sizeBytes"] == size_of(p["partNumber"])}
    progress = _Progress(upload_id, size, sum(size_of(n) for n in have), big.on_progress)
    progress.report()
    todo = [n for n in range(1, count + 1) if n not in have]
    parts = tuple(_put_part(body, upload_id, n, (n - 1) * part_size, size_of(n), scope, progress) for n in todo)
    yield Together(parts, max(1, big.part_concurrency))
    complete = Call("POST", f"{upload_path(upload_id)}/complete", timeout=commit_timeout(size))
    try:
        answer: Answer = yield complete
    except ArtifactStoreError as err:
        # Parts that do not make the declared sha256 end the upload (422); so does its expiry (404).
        if err.status in (404, 422) and big.records is not None and key is not None:
            big.records.delete(key)
        raise
    ref = answer.parse(ArtifactRef.from_json, "ArtifactRef")
    if big.records is not None and key is not None:
        big.records.delete(key)
    return ref


def _put_part(body: Body, upload_id: str, n: int, start: int, size: int, scope: Scope, progress: _Progress) -> Op[None]:
    data: bytes = yield ReadSlice(body, start, size)
    sha256: str = yield HashBody(BytesBody(data))
    asked = {"parts": [{"partNumber": n, "sha256": sha256}]}
    answer: Answer = yield json_call("POST", f"{upload_path(upload_id)}/parts", asked, scope_headers(scope))
    part = answer.parse(_part_url, "PartUrls")
    try:
        # The blob store's 5xx, 429 and dropped connections are retried, as the client retries.
        yield Call(part["method"], part["url"], headers=part["headers"], body=BytesBody(data), external=True)
    except ArtifactStoreError as err:
        raise BackendUnavailableError(
            f"The blob store refused part {n} of upload {upload_id}: {err.message}", status=err.status
        ) from err
    progress.add(size)


def _part_url(value: Any) -> dict[str, Any]:
    parts = value.get("parts") if isinstance(value, dict) else None
    if not isinstance(parts, list) or len(parts) != 1 or not isinstance(parts[0], dict):
        raise ValueError("field parts: expected the one part asked for")
    part = parts[0]
    headers = part.get("headers") or {}
    if not isinstance(part.get("url"), str) or not isinstance(headers, dict):
        raise ValueError("field parts[0]: expected a url and headers")
    if not all(isinstance(v, str) for v in headers.values()):
        raise ValueError("field parts[0].headers: expected string values")
    return {"url": part["url"], "method": part.get("method") or "PUT", "headers": headers}


# tus


def _metadata_pair(key: str, value: str) -> str:
    return f"{key} {base64.b64encode(value.encode('utf-8')).decode('ascii')}"


_TUS_LOCATION = re.compile(r"/v1/tus/([A-Za-z0-9_-]+)$")


def _tus_offset(path: str, size: int, scope: Scope) -> Op[int | None]:
    """Where a tus upload stands (its acknowledged offset), or None when it is gone or for other bytes."""
    try:
        answer: Answer = yield Call("HEAD", path, headers={**TUS, **scope_headers(scope)})
    except NotFoundError:
        return None
    try:
        offset = int(answer.headers.get("upload-offset", ""))
        length = int(answer.headers.get("upload-length", ""))
    except ValueError:
        return None
    return offset if length == size else None


def put_tus(
    body: Body,
    *,
    size: int,
    sha256: str,
    mime_type: str | None,
    filename: str | None,
    namespace: str | None,
    meta: Mapping[str, Any] | None,
    ttl: int | str | None,
    scope: Scope,
    big: BigUpload,
    key: str,
    retries: int,
    wait: Callable[[float | None, int], float],
) -> Op[ArtifactRef | None]:
    """The file through the service over tus, in checksummed chunks, continuing a recorded upload;
    None when the service has no /v1/tus (the caller then puts the plain way)."""
    records = big.records
    scoped = scope_headers(scope)
    path = records.get(key) if records is not None else None
    offset: int | None = None
    if path is not None:
        offset = (yield from _tus_offset(path, size, scope)) if _TUS_LOCATION.search(path) else None
        if offset is None:
            assert records is not None
            records.delete(key)
    if path is None or offset is None:
        metadata = [
            _metadata_pair("filename", filename) if filename is not None else None,
            _metadata_pair("filetype", mime_type) if mime_type else None,
            _metadata_pair("namespace", namespace) if namespace is not None else None,
            _metadata_pair("ttl", ttl_value(ttl)) if ttl is not None else None,
            _metadata_pair("meta", json.dumps(dict(meta))) if meta is not None else None,
            _metadata_pair("sha256", sha256),
        ]
        headers = {
            **TUS,
            **scoped,
            "Upload-Length": str(size),
            "Upload-Metadata": ",".join(p for p in metadata if p is not None),
        }
        try:
            created: Answer = yield Call("POST", "/v1/tus", headers=headers)
        except ArtifactStoreError as err:
            # No tus here (a Worker, or a service that predates it).
            if err.status in (404, 405):
                return None
            raise
        location = created.headers.get("location", "")
        found = _TUS_LOCATION.search(location.split("?")[0])
        if not found:
            raise BackendUnavailableError(f"The service created a tus upload at an unknown place: {location!r}.")
        path = f"/v1/tus/{found.group(1)}"
        offset = 0
        if "x-artifact-id" in created.headers:
            # An empty file is stored at once.
            return (yield from _tus_ref(created.headers["x-artifact-id"], scope, records, key))
        if records is not None:
            records.set(key, path)
    progress = _Progress(path.rsplit("/", 1)[-1], size, offset, big.on_progress)
    progress.report()
    chunk_bytes = max(1, big.tus_chunk_bytes)
    artifact_id: str | None = None
    attempt = 0
    while artifact_id is None:
        if offset >= size:
            # Every byte is there already (a PATCH whose answer was lost): a HEAD names the artifact.
            answer = yield Call("HEAD", path, headers={**TUS, **scoped})
            artifact_id = answer.headers.get("x-artifact-id")
            if not artifact_id:
                raise BackendUnavailableError(f"Upload {path} has all its bytes but no artifact.")
            break
        count = min(chunk_bytes, size - offset)
        data: bytes = yield ReadSlice(body, offset, count)
        digest: str = yield HashBody(BytesBody(data))
        patch = Call(
            "PATCH",
            path,
            headers={
                **TUS,
                **scoped,
                "Content-Type": "application/offset+octet-stream",
                "Upload-Offset": str(offset),
                "Upload-Checksum": f"sha256 {base64.b64encode(bytes.fromhex(digest)).decode('ascii')}",
            },
            body=BytesBody(data),
            retry=False,
            timeout=commit_timeout(size) if offset + count >= size else None,
        )
        try:
            answer = yield patch
        except ArtifactStoreError as err:
            failure = err
        else:
            try:
                offset = int(answer.headers.get("upload-offset", ""))
            except ValueError:
                offset = offset + count
            artifact_id = answer.headers.get("x-artifact-id")
            attempt = 0
            progress.at(offset)
            continue
        # Refused for good (a quota, the whole file's sha256, gone): the upload is over, and its record.
        retryable = isinstance(failure, (RateLimitedError, BackendUnavailableError)) or failure.status in (
            409,
            TUS_CHECKSUM_MISMATCH,
        )
        if not retryable:
            if records is not None:
                records.delete(key)
            raise failure
        if attempt >= retries:
            raise BackendUnavailableError(
                f"The upload through the service failed after {attempt + 1} attempts ({failure.message}); "
                f"{offset} of {size} bytes are kept: put the same file again with resume to go on."
            ) from failure
        told = failure.details.get("offset") if failure.status == 409 else None
        if not isinstance(told, int) or isinstance(told, bool):
            yield Sleep(wait(getattr(failure, "retry_after", None), attempt))
            # Whatever the service acknowledged of the failed PATCH is kept: go on from there.
            told = yield from _tus_offset(path, size, scope)
            if told is None:
                if records is not None:
                    records.delete(key)
                raise BackendUnavailableError(f"Upload {path} is gone from the service; put the file again.") from failure
        attempt += 1
        offset = told
        progress.at(offset)
    return (yield from _tus_ref(artifact_id, scope, records, key))


def _tus_ref(artifact_id: str, scope: Scope, records: ResumeRecords | None, key: str) -> Op[ArtifactRef]:
    if records is not None:
        records.delete(key)
    answer: Answer = yield Call("GET", f"{artifact_path(artifact_id)}/meta", headers=scope_headers(scope))
    return answer.parse(ArtifactRef.from_json, "ArtifactRef")
