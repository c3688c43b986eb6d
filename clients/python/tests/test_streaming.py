"""A 256 MiB round trip through both clients, from an iterator up and through stream() down, never held in memory."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from typing import Any

from support import MiB, opened, run

SIZE = 256 * MiB
CHUNK = 1 * MiB


def kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise LookupError(field)


def reset_peak_rss() -> None:
    # "5" resets VmHWM to the current RSS (Linux 4.0+), so the peak below is this test's own.
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


async def test_a_256_mib_round_trip_stays_out_of_memory(client: Any) -> None:
    sent = hashlib.sha256()

    def generated() -> Iterator[bytes]:
        for _ in range(SIZE // CHUNK):
            chunk = os.urandom(CHUNK)
            sent.update(chunk)
            yield chunk

    reset_peak_rss()
    before = kib("VmRSS")

    ref = await run(client.put(generated(), mime_type="application/octet-stream", filename="big.bin"))
    assert ref.size_bytes == SIZE
    assert ref.sha256 == sent.hexdigest()

    received = hashlib.sha256()
    size = 0
    async with opened(client.stream(ref.id)) as chunks:
        if hasattr(chunks, "__aiter__"):
            async for chunk in chunks:
                received.update(chunk)
                size += len(chunk)
        else:
            for chunk in chunks:
                received.update(chunk)
                size += len(chunk)
    assert size == SIZE
    assert received.hexdigest() == sent.hexdigest()

    growth = kib("VmHWM") - before
    assert growth < 64 * MiB, f"peak RSS grew by {growth / MiB:.1f} MiB"
    assert await run(client.delete(ref.id))
