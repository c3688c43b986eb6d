"""ADK for Python's artifacts in artifact-store: ArtifactStoreArtifactService makes the calls a Runner
makes for `tool_context.save_artifact` / `load_artifact` / `list_artifacts`. It runs without
google-adk installed; with it, the same object is the Runner's `artifact_service`.

    npm start                      # in another terminal: prints ARTIFACT_STORE_TOKEN
    export ARTIFACT_STORE_TOKEN=…
    PYTHONPATH=clients/python/src python3 examples/adk_python.py

ARTIFACT_STORE_URL names another service (default http://127.0.0.1:8787). The token npm start prints
is bound to the user "dev", which is why the calls below act for "dev".
"""

PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)  # a chart a tool drew

# #region calls
import asyncio

from artifact_store_client.adk import ArtifactStoreArtifactService, Blob, Part


async def main() -> None:
    # ARTIFACT_STORE_URL and ARTIFACT_STORE_TOKEN, or base_url= and token=, or a client of your own.
    async with ArtifactStoreArtifactService() as artifacts:
        where = {"app_name": "travel_agent", "user_id": "dev", "session_id": "s-1"}
        chart = Part(inline_data=Blob(data=PNG, mime_type="image/png"))
        await artifacts.save_artifact(**where, filename="chart.png", artifact=chart)  # 0
        second = await artifacts.save_artifact(
            **where, filename="chart.png", artifact=chart, custom_metadata={"step": 2}
        )  # 1: the same bytes, stored once
        await artifacts.save_artifact(**where, filename="user:itinerary.txt", artifact=Part(text="Lisbon, 3 nights"))
        loaded = await artifacts.load_artifact(**where, filename="chart.png", version=0)  # the Part, or None
        versions = await artifacts.list_artifact_versions(**where, filename="chart.png")
        # Another session of the same user sees the user: filename, not the session's chart.
        seen = await artifacts.list_artifact_keys(app_name="travel_agent", user_id="dev", session_id="s-2")
        # A link a browser opens without a token.
        link = await artifacts.version_url(**where, filename="chart.png", version=0, expires_in=600)
        # Parallel saves of one filename: each gets its own number.
        many = await asyncio.gather(
            *(artifacts.save_artifact(**where, filename="log.txt", artifact=Part(text=f"step {i}")) for i in range(20))
        )
        for filename in ("chart.png", "user:itinerary.txt", "log.txt"):
            await artifacts.delete_artifact(**where, filename=filename)
    # #endregion
    assert loaded is not None and loaded.inline_data is not None
    print(f"chart.png version {second}: {[(v.version, v.mime_type, v.custom_metadata) for v in versions]}")
    print(f"version 0 loads {len(loaded.inline_data.data)} bytes of {loaded.inline_data.mime_type}")
    print(f"same artifact: {versions[0].canonical_uri == versions[1].canonical_uri}; session s-2 sees {seen}")
    print(f"link {link.fetch_mode} ({link.mime_type}); parallel saves got {sorted(many) == list(range(20))}")


asyncio.run(main())
