"""penguiflow's artifact store over artifact-store: store a tool's large observation, read it back.

    npm start                      # in another terminal: prints ARTIFACT_STORE_TOKEN
    export ARTIFACT_STORE_TOKEN=…
    PYTHONPATH=clients/python/src python3 examples/penguiflow_store.py

ARTIFACT_STORE_URL names another service (default http://127.0.0.1:8787). A planner takes `store`
as its artifact store; this script makes the calls the planner would.
"""

import asyncio
import json
import sys

from artifact_store_client.penguiflow import ArtifactScope, HttpArtifactStore

# What a search tool returned: far too large for the model's context.
hits = [{"rank": i, "title": f"Result {i}", "snippet": "lorem ipsum " * 40} for i in range(200)]
observation = json.dumps({"query": "quarterly sales", "hits": hits})


# #region wire
async def main() -> None:
    async with HttpArtifactStore() as store:  # ARTIFACT_STORE_URL, ARTIFACT_STORE_TOKEN
        scope = ArtifactScope(user_id="u-7", session_id="s-42")
        with store.bind(scope):  # each run's reads answer its own session's reference
            ref = await store.put_text(
                observation, mime_type="application/json", namespace="observation.SearchTool", scope=scope
            )
            held = await store.get_ref(ref.id)
            data = await store.get(ref.id)
    # #endregion
    # Refusals raise (ArtifactStoreError: code and message); None means the store holds no such artifact.
    if held is None or data is None:
        sys.exit(f"{ref.id} was stored, yet reads back as None")
    print(f"stored {ref.id} ({ref.size_bytes} bytes)")
    print(f"read back {len(data)} bytes of {held.mime_type}")


asyncio.run(main())
