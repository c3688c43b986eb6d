"""One transfer through the Python client, for the bench's python rows (bench/python.ts).

    python3 bench/python-client.py up|down sync|async URL TOKEN FILE|ID

Prints one JSON line: the seconds the transfer took (from the call to the last byte, the client's
own start and imports excluded, as curl's time_total excludes curl's), the bytes moved, the peak
growth of this process's RSS during the transfer in MiB, and the id of an upload.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from artifact_store_client import ArtifactStoreClient, AsyncArtifactStoreClient


def status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def reset_peak() -> None:
    # "5" resets VmHWM to the current RSS, so the peak read afterwards is this transfer's.
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def sync_transfer(direction: str, url: str, token: str, what: str) -> tuple[int, str | None]:
    with ArtifactStoreClient(url, token, timeout=600) as client:
        if direction == "up":
            ref = client.put(Path(what), mime_type="application/octet-stream", filename="bench.bin")
            return ref.size_bytes, ref.id
        moved = 0
        with client.stream(what) as chunks:
            for chunk in chunks:
                moved += len(chunk)
        return moved, None


async def async_transfer(direction: str, url: str, token: str, what: str) -> tuple[int, str | None]:
    async with AsyncArtifactStoreClient(url, token, timeout=600) as client:
        if direction == "up":
            ref = await client.put(Path(what), mime_type="application/octet-stream", filename="bench.bin")
            return ref.size_bytes, ref.id
        moved = 0
        async with client.stream(what) as chunks:
            async for chunk in chunks:
                moved += len(chunk)
        return moved, None


def main() -> None:
    direction, flavour, url, token, what = sys.argv[1:6]
    reset_peak()
    before = status_kib("VmRSS")
    started = time.perf_counter()
    if flavour == "sync":
        moved, artifact_id = sync_transfer(direction, url, token, what)
    else:
        moved, artifact_id = asyncio.run(async_transfer(direction, url, token, what))
    seconds = time.perf_counter() - started
    growth_mib = (status_kib("VmHWM") - before) / 1024
    print(json.dumps({"seconds": seconds, "bytes": moved, "rssGrowthMiB": growth_mib, "id": artifact_id}))


if __name__ == "__main__":
    main()
