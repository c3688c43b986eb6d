"""penguiflow's ArtifactRetentionConfig: what a store does with it, and what the operator sets from it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Literal

import pytest
from support import MiB, Service, new_name, start_service

from artifact_store_client import BadRequestError
from artifact_store_client.penguiflow import ArtifactScope, HttpArtifactStore, tenant_policy


@dataclass(frozen=True)
class Retention:
    """penguiflow.artifacts.ArtifactRetentionConfig, with its defaults."""

    ttl_seconds: int = 3600
    max_artifact_bytes: int = 50 * MiB
    max_session_bytes: int = 500 * MiB
    max_trace_bytes: int = 100 * MiB
    max_artifacts_per_trace: int = 100
    max_artifacts_per_session: int = 1000
    cleanup_strategy: Literal["lru", "fifo", "none"] = "lru"


async def test_puts_carry_the_ttl(service: Service) -> None:
    async with HttpArtifactStore(service.url, service.token(), retention=Retention(ttl_seconds=120)) as store:
        ref = await store.put_text("short-lived", scope={"session_id": "s-1"})
        held = await store.client.meta(ref.id, session="s-1")
    assert held is not None and held.expires_at is not None
    left = held.expires_at - datetime.now(timezone.utc)
    assert timedelta(seconds=100) < left <= timedelta(seconds=121)


async def test_a_put_over_max_artifact_bytes_is_refused_before_it_is_sent(service: Service) -> None:
    async with HttpArtifactStore(service.url, service.token(), retention=Retention(max_artifact_bytes=10)) as store:
        # penguiflow's own words, which its callers match on.
        with pytest.raises(ValueError, match=r"Artifact size \(11 bytes\) exceeds limit \(10 bytes"):
            await store.put_bytes(b"x" * 11)
        with pytest.raises(ValueError, match="13 bytes"):
            await store.put_text("ü" * 6 + "x")
        assert await store.list() == []
        assert (await store.put_bytes(b"x" * 10)).size_bytes == 10


def test_tenant_policy_speaks_the_services_names() -> None:
    assert tenant_policy(Retention()) == {
        "defaultTtlSeconds": 3600,
        "maxTtlSeconds": 7 * 24 * 3600,
        "maxArtifactBytes": 50 * MiB,
        "maxSessionBytes": 500 * MiB,
        "maxTraceBytes": 100 * MiB,
        "maxArtifactsPerSession": 1000,
        "maxArtifactsPerTrace": 100,
        "cleanupStrategy": "lru",
    }
    assert tenant_policy(Retention(cleanup_strategy="fifo"))["cleanupStrategy"] == "fifo"
    # penguiflow's none evicts nothing and lets puts go past the limits: the service's never.
    assert tenant_policy(Retention(cleanup_strategy="none"))["cleanupStrategy"] == "never"
    with pytest.raises(ValueError, match="'reject'"):
        tenant_policy(replace(Retention(), cleanup_strategy="reject"))
    # A longer ttl raises the tenant's maximum with it; penguiflow's 0 (keep for good) allows no expiry.
    month = 30 * 24 * 3600
    assert tenant_policy(Retention(ttl_seconds=month))["maxTtlSeconds"] == month
    forever = tenant_policy(Retention(ttl_seconds=0))
    assert forever["allowNoExpiry"] is True
    assert "defaultTtlSeconds" not in forever


TWO_PER_SESSION = Retention(max_artifacts_per_session=2)


@pytest.fixture(scope="module")
def policed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A service whose operator set two tenants' policies from penguiflow retention configs."""
    policies = {
        "keeps-all": tenant_policy(replace(TWO_PER_SESSION, cleanup_strategy="none")),
        "evicts": tenant_policy(TWO_PER_SESSION),
        "forever": tenant_policy(replace(TWO_PER_SESSION, ttl_seconds=0)),
    }
    running = start_service(
        tmp_path_factory.mktemp("policed"), {"ARTIFACT_STORE_TENANT_POLICIES": json.dumps(policies)}
    )
    yield running
    running.stop()


@pytest.mark.parametrize(("tenant", "kept"), [("keeps-all", [True, True, True]), ("evicts", [False, True, True])])
async def test_a_full_session_keeps_or_evicts_as_penguiflow_would(
    policed: Service, tenant: str, kept: list[bool]
) -> None:
    session = ArtifactScope(tenant_id=tenant, session_id=new_name("s"))
    async with HttpArtifactStore(policed.url, policed.token(tenant)) as store:
        refs = [await store.put_text(f"observation {i}", scope=session) for i in range(3)]
        with store.bind(session):
            assert [await store.exists(ref.id) for ref in refs] == kept
        assert len(await store.list(scope=session)) == kept.count(True)


async def test_penguiflows_ttl_of_zero_keeps_artifacts_for_good_where_the_operator_allows_it(policed: Service) -> None:
    forever = Retention(ttl_seconds=0)
    session = {"session_id": new_name("s")}
    async with HttpArtifactStore(policed.url, policed.token("forever"), retention=forever) as store:
        ref = await store.put_text("kept for good", scope=session)
        held = await store.client.meta(ref.id, session=session["session_id"])
    assert held is not None and held.expires_at is None
    # Where the operator did not allow it, the service says so instead of picking a ttl.
    async with HttpArtifactStore(policed.url, policed.token("evicts"), retention=forever) as store:
        with pytest.raises(BadRequestError, match="ARTIFACT_STORE_ALLOW_NO_EXPIRY"):
            await store.put_text("kept for good", scope=session)
