from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import MiB, Service, close, start_service

from artifact_store_client import ArtifactStoreClient, AsyncArtifactStoreClient


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def pytest_configure(config: pytest.Config) -> None:
    # Stopped from outside (a runner's timeout), pytest still tears down and stops the services.
    signal.signal(signal.SIGTERM, _interrupt)


@pytest.fixture(autouse=True)
def _no_connection_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clients read these as defaults: a developer's own must not leak into the tests."""
    for name in ("ARTIFACT_STORE_URL", "ARTIFACT_STORE_TOKEN", "ARTIFACT_STORE_SESSION"):
        monkeypatch.delenv(name, raising=False)


# Tenants with their own limits, so one service provokes 409 and 413 without touching the others.
POLICIES = {
    "tight": {"maxTenantBytes": 64},
    "small": {"maxArtifactBytes": 1024},
}


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir = tmp_path_factory.mktemp("store")
    running = start_service(
        data_dir,
        {
            # Room for the 256 MiB round trip of the streaming test.
            "ARTIFACT_STORE_MAX_ARTIFACT_BYTES": str(300 * MiB),
            "ARTIFACT_STORE_TENANT_POLICIES": json.dumps(POLICIES),
        },
    )
    yield running
    running.stop()
    # pytest keeps the last runs' temp folders: not the streaming test's 512 MiB of blobs.
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A second service that lets each tenant one request a second."""
    running = start_service(
        tmp_path_factory.mktemp("limited"),
        {"ARTIFACT_STORE_TENANT_REQUESTS_PER_SECOND": "1", "ARTIFACT_STORE_TENANT_REQUEST_BURST": "1"},
    )
    yield running
    running.stop()


@pytest.fixture(scope="session")
def unexpiring(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A third service, whose operator lets puts ask for references that never expire."""
    running = start_service(tmp_path_factory.mktemp("unexpiring"), {"ARTIFACT_STORE_ALLOW_NO_EXPIRY": "true"})
    yield running
    running.stop()


ClientFactory = Callable[..., Any]


@pytest.fixture(params=["sync", "async"])
async def connect(request: pytest.FixtureRequest, service: Service) -> Any:
    """Makes clients of one kind (each test runs with both), closed after the test.

    Each client gets its own tenant unless given a token, so tests never see each other's artifacts.
    """
    made: list[Any] = []

    def make(**options: Any) -> Any:
        options.setdefault("base_url", service.url)
        options.setdefault("token", service.token())
        kind = ArtifactStoreClient if request.param == "sync" else AsyncArtifactStoreClient
        client = kind(**options)
        made.append(client)
        return client

    make.kind = request.param  # type: ignore[attr-defined]
    yield make
    for client in made:
        await close(client)


@pytest.fixture
def client(connect: ClientFactory) -> Any:
    return connect()


@pytest.fixture
def is_async(connect: ClientFactory) -> bool:
    return connect.kind == "async"  # type: ignore[attr-defined]


@pytest.fixture
def tmp_file(tmp_path: Path) -> Callable[[bytes, str], Path]:
    def write(data: bytes, name: str = "data.bin") -> Path:
        path = tmp_path / name
        path.write_bytes(data)
        return path

    return write
