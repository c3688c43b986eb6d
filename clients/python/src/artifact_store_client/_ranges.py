"""Byte ranges: the Range header, and cutting a range out of a whole body an intermediary sent instead."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

# (start, end), both inclusive as in HTTP; (start, None) for the rest.
ByteRange = tuple[int, "int | None"]


def range_header(byte_range: ByteRange) -> str:
    start, end = byte_range
    if start < 0 or (end is not None and end < start):
        raise ValueError(f"range {byte_range!r} must be (start, end) with 0 <= start <= end, or (start, None).")
    return f"bytes={start}-{'' if end is None else end}"


def cut_range(chunks: Iterator[bytes], byte_range: ByteRange) -> Iterator[bytes]:
    """Bytes start..end (inclusive) of a whole-body stream."""
    window = _Window(byte_range)
    for chunk in chunks:
        piece, done = window.take(chunk)
        if piece:
            yield piece
        if done:
            return


async def acut_range(chunks: AsyncIterator[bytes], byte_range: ByteRange) -> AsyncIterator[bytes]:
    window = _Window(byte_range)
    async for chunk in chunks:
        piece, done = window.take(chunk)
        if piece:
            yield piece
        if done:
            return


class _Window:
    def __init__(self, byte_range: ByteRange) -> None:
        self.start, end = byte_range
        self.stop = None if end is None else end + 1
        self.offset = 0

    def take(self, chunk: bytes) -> tuple[bytes, bool]:
        begin = self.offset
        self.offset += len(chunk)
        piece = chunk[max(0, self.start - begin) : None if self.stop is None else max(0, self.stop - begin)]
        return piece, self.stop is not None and self.offset >= self.stop
