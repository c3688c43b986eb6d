"""Helpers of the tests: the real service in its own process group, and one way to drive both clients."""

from __future__ import annotations

import inspect
import os
import re
import shutil
import signal
import subprocess
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from artifact_store_client import mint_hs256_token

REPO = Path(os.environ.get("ARTIFACT_STORE_REPO") or Path(__file__).resolve().parents[3])
KID = "py"
SECRET = "python-client-tests-secret-0123456789abcdef"
MiB = 1024 * 1024


@dataclass
class Service:
    url: str
    proc: subprocess.Popen[bytes]
    output: list[str]

    def token(
        self,
        tenant: str | None = None,
        *,
        perms: tuple[str, ...] = ("read", "write", "admin"),
        **claims: Any,
    ) -> str:
        return mint_hs256_token(SECRET, kid=KID, tenant=tenant or new_name("t"), perms=perms, **claims)

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        # The leader may exit before the rest of its group.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


def new_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def start_service(data_dir: Path, env: dict[str, str] | None = None) -> Service:
    """`artifact-store serve` on a free port, with only the ARTIFACT_STORE_* settings given here."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH: the tests run the service from the repository.")
    settings = {
        "ARTIFACT_STORE_ENV": "development",
        "ARTIFACT_STORE_LOG_LEVEL": "warn",
        "ARTIFACT_STORE_JWT_SECRETS": f"{KID}:{SECRET}",
        **(env or {}),
    }
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("ARTIFACT_STORE_")}
    proc = subprocess.Popen(
        [node, "--import", "tsx", "src/cli/main.ts", "serve", "--port", "0", "--data-dir", str(data_dir)],
        cwd=REPO,
        env={**inherited, **settings},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    output: list[str] = []
    listening = threading.Event()

    def drain() -> None:
        # Read to the end, so a chatty server never blocks on a full pipe.
        assert proc.stdout is not None
        for raw in proc.stdout:
            output.append(raw.decode("utf-8", "replace"))
            if "listening on" in output[-1]:
                listening.set()
        listening.set()

    threading.Thread(target=drain, daemon=True).start()
    service = Service("", proc, output)
    if not listening.wait(timeout=90) or proc.poll() is not None:
        service.stop()
        raise RuntimeError(f"artifact-store serve did not start (exit {proc.returncode}):\n{''.join(output)}")
    match = re.search(r"listening on (http://\S+)", "".join(output))
    assert match, "".join(output)
    service.url = match.group(1)
    return service


def recording(sent: list[httpx.Request], answer: Callable[[], httpx.Response]) -> httpx.MockTransport:
    """A mock service that keeps every request and answers each with `answer()`."""

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return answer()

    return httpx.MockTransport(handle)


async def run(value: Any) -> Any:
    """The result of a client call, whether the client is sync or async."""
    return await value if inspect.isawaitable(value) else value


async def collect(items: Any, limit: int | None = None) -> list[Any]:
    """The items of an iterator or async iterator (at most `limit`), then closes it."""
    out: list[Any] = []
    if hasattr(items, "__aiter__"):
        try:
            async for item in items:
                out.append(item)
                if limit is not None and len(out) >= limit:
                    break
        finally:
            if hasattr(items, "aclose"):
                await items.aclose()
    else:
        try:
            for item in items:
                out.append(item)
                if limit is not None and len(out) >= limit:
                    break
        finally:
            if hasattr(items, "close"):
                items.close()
    return out


@asynccontextmanager
async def opened(manager: Any) -> AsyncIterator[Any]:
    """`with` or `async with`, whichever the context manager takes."""
    if hasattr(manager, "__aenter__"):
        async with manager as value:
            yield value
    else:
        with manager as value:
            yield value


async def read_all(chunks: Any) -> bytes:
    return b"".join(await collect(chunks))


async def close(client: Any) -> None:
    await run(client.aclose() if hasattr(client, "aclose") else client.close())


class Wire:
    """The real network under a client, keeping each request that went out (method, URL, body
    size) and failing the ones `fault` picks: `fault(request, seen)` (seen: how many requests like
    it went before, by method and path) returns None to let it through, a status to answer in its
    stead, or "cut" to deliver it and lose the answer (the connection drops after the service acted).
    """

    def __init__(self, fault: Callable[[httpx.Request, int], int | str | None] | None = None) -> None:
        self.sent: list[tuple[str, httpx.URL, int]] = []
        self.requests: list[httpx.Request] = []
        self._fault = fault
        self._seen: dict[tuple[str, str], int] = {}

    def _note(self, request: httpx.Request, size: int) -> int | str | None:
        self.sent.append((request.method, request.url, size))
        self.requests.append(request)
        key = (request.method, request.url.path)
        seen = self._seen.get(key, 0)
        self._seen[key] = seen + 1
        return self._fault(request, seen) if self._fault else None

    def count(self, method: str, contains: str = "") -> int:
        return sum(1 for m, url, _ in self.sent if m == method and contains in str(url))

    def sync(self) -> httpx.BaseTransport:
        wire, inner = self, httpx.HTTPTransport()

        class Transport(httpx.BaseTransport):
            def handle_request(self, request: httpx.Request) -> httpx.Response:
                body = request.read()
                fault = wire._note(request, len(body))
                if isinstance(fault, int):
                    return httpx.Response(fault, json={"code": "backend_unavailable", "message": "injected"})
                response = inner.handle_request(request)
                if fault == "cut":
                    response.read()
                    response.close()
                    raise httpx.ReadError("connection cut by the test", request=request)
                return response

            def close(self) -> None:
                inner.close()

        return Transport()

    def asynchronous(self) -> httpx.AsyncBaseTransport:
        wire, inner = self, httpx.AsyncHTTPTransport()

        class Transport(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                body = await request.aread()
                fault = wire._note(request, len(body))
                if isinstance(fault, int):
                    return httpx.Response(fault, json={"code": "backend_unavailable", "message": "injected"})
                response = await inner.handle_async_request(request)
                if fault == "cut":
                    await response.aread()
                    await response.aclose()
                    raise httpx.ReadError("connection cut by the test", request=request)
                return response

            async def aclose(self) -> None:
                await inner.aclose()

        return Transport()

    def transport(self, is_async: bool) -> Any:
        return self.asynchronous() if is_async else self.sync()
