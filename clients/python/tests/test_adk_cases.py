"""The shared ADK cases (test/fixtures/adk-cases.json) against artifact_store_client.adk over HTTP.

test/adk-cases.test.ts runs the same list against the TypeScript adapter, so both answer each call
alike. Each case gets a fresh tenant, and runs over both clients (async, and sync in worker threads).
"""

from __future__ import annotations

import base64
import json
import re
import time
from typing import Any

import pytest
from support import REPO, Service, close

from artifact_store_client import ArtifactStoreClient, AsyncArtifactStoreClient
from artifact_store_client.adk import ArtifactStoreArtifactService, Blob, FileData, Part

CASES = json.loads((REPO / "test" / "fixtures" / "adk-cases.json").read_text(encoding="utf-8"))
DEFAULTS = CASES["defaults"]
# ADK for Python reads artifact:// URIs as its own references, so this adapter's form is the service's URL.
CANONICAL_URI = CASES["canonicalUri"]["python"]


def part_of(neutral: dict[str, Any]) -> Any:
    """A case's part as the Part ADK passes."""
    if "text" in neutral:
        return Part(text=neutral["text"])
    if "inlineData" in neutral:
        given = neutral["inlineData"]
        return Part(
            inline_data=Blob(
                data=base64.b64decode(given["base64"]),
                mime_type=given.get("mimeType"),
                display_name=given.get("displayName"),
            )
        )
    if "fileData" in neutral:
        given = neutral["fileData"]
        return Part(
            file_data=FileData(
                file_uri=given["fileUri"], mime_type=given.get("mimeType"), display_name=given.get("displayName")
            )
        )
    return Part()


def neutral_of(part: Any) -> Any:
    """A loaded Part in the cases' form, leaving out fields that are None."""
    if part is None:
        return None

    def some(**fields: Any) -> dict[str, Any]:
        return {k: v for k, v in fields.items() if v is not None}

    if part.inline_data is not None:
        blob = part.inline_data
        return {
            "inlineData": some(
                base64=base64.b64encode(blob.data or b"").decode(),
                mimeType=blob.mime_type,
                displayName=blob.display_name,
            )
        }
    if part.file_data is not None:
        fd = part.file_data
        return {"fileData": some(fileUri=fd.file_uri, mimeType=fd.mime_type, displayName=fd.display_name)}
    return {"text": part.text}


def check_version(got: Any, want: dict[str, Any], app: str, started: float, base_url: str) -> None:
    assert got is not None, f"expected version {want}"
    assert {"version": got.version, "mimeType": got.mime_type, "customMetadata": got.custom_metadata} == want
    form = re.escape(CANONICAL_URI).replace(re.escape("{baseUrl}"), re.escape(base_url))
    form = form.replace(re.escape("{id}"), rf"{re.escape(app)}_[0-9a-f]{{24}}")
    assert re.fullmatch(form, got.canonical_uri), got.canonical_uri
    assert started - 5 <= got.create_time <= time.time() + 5, got.create_time


async def run_step(adk: ArtifactStoreArtifactService, step: dict[str, Any], started: float) -> Any:
    where: dict[str, Any] = {
        "app_name": step.get("app", DEFAULTS["app"]),
        "user_id": step.get("user", DEFAULTS["user"]),
        "session_id": step.get("session", DEFAULTS["session"]),
    }
    op = step["op"]
    if op == "listArtifactKeys":
        return await adk.list_artifact_keys(**where)
    where["filename"] = step["filename"]
    if op == "save":
        return await adk.save_artifact(
            **where, artifact=part_of(step["part"]), custom_metadata=step.get("customMetadata")
        )
    if op == "load":
        return neutral_of(await adk.load_artifact(**where, version=step.get("version")))
    if op == "delete":
        return await adk.delete_artifact(**where)
    if op == "listVersions":
        return await adk.list_versions(**where)
    if op == "listArtifactVersions":
        return await adk.list_artifact_versions(**where)
    if op == "getArtifactVersion":
        return await adk.get_artifact_version(**where, version=step.get("version"))
    raise AssertionError(f"unknown op {op}")


@pytest.mark.parametrize("kind", ["async", "sync"])
@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
async def test_shared_adk_case(case: dict[str, Any], kind: str, service: Service) -> None:
    # A tenant-wide token: no user and no session of its own, so each call names them.
    token = service.token(perms=("read", "write"))
    client = (AsyncArtifactStoreClient if kind == "async" else ArtifactStoreClient)(base_url=service.url, token=token)
    adk = ArtifactStoreArtifactService(client)
    started = time.time()
    try:
        for index, step in enumerate(case["steps"]):
            label = f"step {index}: {json.dumps(step, ensure_ascii=False)}"
            if "error" in step:
                with pytest.raises(ValueError) as refused:
                    await run_step(adk, step, started)
                assert step["error"] in str(refused.value), label
                continue
            got = await run_step(adk, step, started)
            want = step["expect"]
            app = step.get("app", DEFAULTS["app"])
            if step["op"] == "listArtifactVersions":
                assert len(got) == len(want), label
                for g, w in zip(got, want):
                    check_version(g, w, app, started, client.base_url)
            elif step["op"] == "getArtifactVersion" and want is not None:
                check_version(got, want, app, started, client.base_url)
            else:
                assert got == want, label
    finally:
        await close(client)
