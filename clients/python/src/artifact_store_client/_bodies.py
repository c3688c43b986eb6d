"""A put's body, whatever the caller handed in, as something each attempt can send.

Bytes, text, a path and a seekable file can be sent again, so their puts are retried; an iterator
or a pipe can be read once. Files are read in chunks as the request goes out, never whole.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import threading
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext
from typing import IO, Any, Union

from ._headers import TEXT_MIME

CHUNK_BYTES = 256 * 1024

PutData = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", IO[bytes], Iterable[bytes], AsyncIterable[bytes]]


class Body:
    """What a request sends. `size` is None when only the end of the data tells it."""

    size: int | None = None
    replayable: bool = True
    default_mime: str | None = None

    def content(self) -> Any:
        """A context manager giving one attempt's content for httpx.Client."""
        raise NotImplementedError

    def acontent(self) -> Any:
        """A context manager giving one attempt's content for httpx.AsyncClient."""
        raise NotImplementedError

    def sha256(self) -> str:
        raise NotImplementedError

    def read_slice(self, start: int, size: int) -> bytes:
        """`size` bytes from `start` (a part of an upload in parts, a tus chunk): only those are read."""
        raise TypeError("Only bytes and seekable files can be sent in parts.")


class BytesBody(Body):
    def __init__(self, data: bytes, default_mime: str | None = None) -> None:
        self.data = data
        self.size = len(data)
        self.default_mime = default_mime

    def content(self) -> Any:
        return nullcontext(self.data)

    def acontent(self) -> Any:
        return nullcontext(self.data)

    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def read_slice(self, start: int, size: int) -> bytes:
        return self.data[start : start + size]


class FileBody(Body):
    """A path, opened anew for each attempt, or a seekable file, sent from where it stood."""

    def __init__(self, source: os.PathLike[str] | IO[bytes]) -> None:
        self._source = source
        if isinstance(source, os.PathLike):
            self._start = 0
            self.size = os.stat(source).st_size
        else:
            self._start = source.tell()
            self.size = source.seek(0, io.SEEK_END) - self._start
            source.seek(self._start)
        # Parts read at once from one file object take turns (a path is opened by each read).
        self._lock = threading.Lock()

    @contextmanager
    def _opened(self) -> Iterator[IO[bytes]]:
        if isinstance(self._source, os.PathLike):
            with open(self._source, "rb") as file:
                yield file
        else:
            self._source.seek(self._start)
            yield self._source

    @contextmanager
    def content(self) -> Iterator[Iterator[bytes]]:
        with self._opened() as file:
            yield _read_chunks(file, self.size)

    @asynccontextmanager
    async def acontent(self) -> AsyncIterator[AsyncIterator[bytes]]:
        with self._opened() as file:
            yield _aread_chunks(file, self.size)

    def sha256(self) -> str:
        digest = hashlib.sha256()
        with self.content() as chunks:
            for chunk in chunks:
                digest.update(chunk)
        return digest.hexdigest()

    def read_slice(self, start: int, size: int) -> bytes:
        if isinstance(self._source, os.PathLike):
            with open(self._source, "rb") as file:
                file.seek(start)
                data = file.read(size)
        else:
            with self._lock:
                self._source.seek(self._start + start)
                data = self._source.read(size)
        if len(data) != size:
            raise ValueError(f"The file is shorter than when its upload began: {start + len(data)} bytes, not {start + size}.")
        return data


class StreamBody(Body):
    """An iterator, an async iterator or an unseekable file: read once, as it is sent."""

    replayable = False

    def __init__(self, source: Iterable[bytes] | AsyncIterable[bytes] | IO[bytes]) -> None:
        self._source = source

    def content(self) -> Any:
        if isinstance(self._source, AsyncIterable) and not hasattr(self._source, "read"):
            raise TypeError("An async iterator can only be put with AsyncArtifactStoreClient.")
        if hasattr(self._source, "read"):
            return nullcontext(_read_chunks(self._source, None))  # type: ignore[arg-type]
        return nullcontext(_checked_chunks(self._source))

    def acontent(self) -> Any:
        if hasattr(self._source, "read"):
            return nullcontext(_aread_chunks(self._source, None))  # type: ignore[arg-type]
        if isinstance(self._source, AsyncIterable):
            return nullcontext(_achecked_chunks(self._source))
        return nullcontext(_achecked_chunks(_as_async(self._source)))


def body_of(data: PutData) -> Body:
    if isinstance(data, str):
        return BytesBody(data.encode("utf-8"), TEXT_MIME)
    if isinstance(data, bytes):
        return BytesBody(data)
    if isinstance(data, (bytearray, memoryview)):
        return BytesBody(bytes(data))
    if isinstance(data, os.PathLike):
        return FileBody(data)
    if isinstance(data, io.TextIOBase):
        raise TypeError("Open the file in binary mode ('rb'): a put sends bytes.")
    if hasattr(data, "read"):
        return FileBody(data) if _seekable(data) else StreamBody(data)  # type: ignore[arg-type]
    if isinstance(data, (AsyncIterable, Iterable)) and not isinstance(data, dict):
        return StreamBody(data)  # type: ignore[arg-type]
    raise TypeError(
        f"Cannot put {type(data).__name__}: pass bytes, str, a path, a binary file, "
        "or an iterator of bytes."
    )


def _seekable(file: Any) -> bool:
    try:
        return bool(file.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _read_chunks(file: IO[bytes], size: int | None) -> Iterator[bytes]:
    """Up to `size` bytes (None: to the end), so a file that grows meanwhile still matches Content-Length."""
    left = size
    while left is None or left > 0:
        chunk = file.read(CHUNK_BYTES if left is None else min(CHUNK_BYTES, left))
        if not chunk:
            return
        if left is not None:
            left -= len(chunk)
        yield chunk


async def _aread_chunks(file: IO[bytes], size: int | None) -> AsyncIterator[bytes]:
    # Reads go to a thread: a slow disk or pipe must not stall the event loop.
    left = size
    while left is None or left > 0:
        want = CHUNK_BYTES if left is None else min(CHUNK_BYTES, left)
        chunk = await asyncio.to_thread(file.read, want)
        if not chunk:
            return
        if left is not None:
            left -= len(chunk)
        yield chunk


def _checked_chunks(source: Iterable[Any]) -> Iterator[bytes]:
    for chunk in source:
        yield _as_bytes(chunk)


async def _achecked_chunks(source: AsyncIterable[Any]) -> AsyncIterator[bytes]:
    async for chunk in source:
        yield _as_bytes(chunk)


async def _as_async(source: Iterable[bytes]) -> AsyncIterator[bytes]:
    for chunk in source:
        yield chunk


def _as_bytes(chunk: Any) -> bytes:
    if isinstance(chunk, bytes):
        return chunk
    if isinstance(chunk, (bytearray, memoryview)):
        return bytes(chunk)
    raise TypeError(f"A put's iterator must yield bytes, not {type(chunk).__name__}.")
