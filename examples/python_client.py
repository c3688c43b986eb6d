"""The Python client against a running service: store a tool's PDF, read it back whole and by range,
list, get a browser link, delete, end the session; then the same with the async client.

    npm start                      # in another terminal: prints ARTIFACT_STORE_TOKEN
    export ARTIFACT_STORE_TOKEN=…
    PYTHONPATH=clients/python/src python3 examples/python_client.py

ARTIFACT_STORE_URL names another service (default http://127.0.0.1:8787). Installed
(`pip install ./clients/python`), the client needs no PYTHONPATH.
"""

import asyncio
import sys

pdf_bytes = b"%PDF-1.4\n% a stand-in for a Tableau export\n"

# #region quickstart
from artifact_store_client import ArtifactStoreClient

# URL and token from ARTIFACT_STORE_URL / ARTIFACT_STORE_TOKEN; scope is for tenant-wide tokens.
with ArtifactStoreClient(scope={"session": "s-42"}) as store:
    ref = store.put(
        pdf_bytes,  # or a path, a binary file, an iterator of bytes: streamed, never read whole
        mime_type="application/pdf",
        filename="Sales.pdf",
        namespace="tableau.download_workbook",
        source={"tool": "download_workbook"},
    )
    data = store.get(ref.id)  # bytes, or None when missing or out of scope
    with store.stream(ref.id, range=(0, 7)) as chunks:
        head = b"".join(chunks)  # b"%PDF-1.4"
    listed = [r.id for r in store.iter_list(namespace="tableau.download_workbook")]
    link = store.url(ref.id, expires_in=600)  # a browser GETs link.url with no token
    store.delete(ref.id)
# #endregion

# Refusals raise (ArtifactStoreError: code and message); None means the store holds no such artifact.
if data is None:
    sys.exit(f"{ref.id} was stored, yet get answers None")
print(f"stored {ref.id} ({ref.mime_type}, {ref.size_bytes} bytes) in session {ref.scope.session_id}")
print(f"read {len(data)} bytes, head {head!r}, listed {len(listed)}, link {link.fetch_mode}")

with ArtifactStoreClient(scope={"session": "s-42"}) as store:
    store.put(b"scratch notes of the session", filename="scratch.txt")

# #region end-session
with ArtifactStoreClient(scope={"session": "s-42"}) as store:
    # The agent's session is over: everything it still holds goes at once (user-wide names stay).
    ended = store.end_session()  # the client's session (s-42 here), or end_session("s-43")
    # SessionEnd(session_id="s-42", refs=…, bytes=…, versions=…): what went
# #endregion
print(f"ended session {ended.session_id}: {ended.refs} references, {ended.bytes} bytes")


# #region async
from artifact_store_client import AsyncArtifactStoreClient


async def main() -> None:
    async with AsyncArtifactStoreClient(scope={"session": "s-42"}) as store:
        ref = await store.put("a large observation, as text", namespace="observation.SearchTool")
        async with store.stream(ref.id) as chunks:
            text = b"".join([chunk async for chunk in chunks]).decode()
        await store.delete(ref.id)
    # #endregion
    print(f"async: stored and read back {len(text)} characters as {ref.id}")


asyncio.run(main())
