"""Named versions from Python: save a file under one name again and again (versions 0, 1, 2…), read
the latest or a given version, list, link, delete; a user-wide name that every session of the user
shares; then parallel saves with the async client.

    npm start                      # in another terminal: prints ARTIFACT_STORE_TOKEN
    export ARTIFACT_STORE_TOKEN=…
    PYTHONPATH=clients/python/src python3 examples/names.py

ARTIFACT_STORE_URL names another service (default http://127.0.0.1:8787).
"""

import sys

# #region names
from artifact_store_client import ArtifactStoreClient

# The app ("adk.reports") is the versions' namespace; names live in the session unless user_wide.
with ArtifactStoreClient(scope={"session": "s-42"}) as store:
    store.save_version("adk.reports", "summary.md", "# Q3\n\nDraft.", mime_type="text/markdown")
    ref = store.save_version(
        "adk.reports", "summary.md", "# Q3\n\nFinal.", mime_type="text/markdown", meta={"status": "final"}
    )  # ref.name == "summary.md", ref.version == 1
    latest = store.load_version("adk.reports", "summary.md")  # LoadedVersion(ref, data), or None
    draft = store.load_version("adk.reports", "summary.md", 0)
    numbers = [r.version for r in store.list_versions("adk.reports", "summary.md")]  # [0, 1]
    names = [n.name for n in store.iter_names("adk.reports")]  # this session's names, by name
    link = store.version_url("adk.reports", "summary.md", expires_in=600)  # a browser GETs link.url
    # User-wide: shared by every session of the user.
    store.save_version("adk.reports", "preferences.json", b'{"tz": "UTC"}', user_wide=True)
    with ArtifactStoreClient(scope={"session": "s-43"}) as other_session:
        prefs = other_session.load_version("adk.reports", "preferences.json", user_wide=True)
        missing = other_session.load_version("adk.reports", "summary.md")  # None: s-42's name
    store.delete_name("adk.reports", "summary.md")  # every version; a later save starts at 0
    store.delete_name("adk.reports", "preferences.json", user_wide=True)
# #endregion

# Refusals raise (ArtifactStoreError: code and message); None means no such name or version.
if latest is None or draft is None or prefs is None:
    sys.exit("a saved version reads back as None")
print(f"saved {ref.name} version {ref.version} ({ref.mime_type}) in {ref.namespace}")
print(f"latest {latest.data!r} {latest.ref.meta}, version 0 {draft.data!r}, versions {numbers}, names {names}")
print(f"link {link.fetch_mode}; session s-43 reads preferences.json {prefs.data!r} and summary.md as {missing}")


# #region async
import asyncio

from artifact_store_client import AsyncArtifactStoreClient


async def main() -> None:
    async with AsyncArtifactStoreClient(scope={"session": "s-42"}) as store:
        # Parallel saves of one name get distinct numbers: 0-4 here, each exactly once.
        saved = await asyncio.gather(*(store.save_version("adk.logs", "run.log", f"step {i}") for i in range(5)))
        async with store.stream_version("adk.logs", "run.log") as latest:
            text = b"".join([chunk async for chunk in latest.chunks]).decode()
        await store.delete_name("adk.logs", "run.log")
    # #endregion
    print(f"async: versions {sorted(r.version for r in saved)}, latest {latest.ref.version} reads {text!r}")


asyncio.run(main())
