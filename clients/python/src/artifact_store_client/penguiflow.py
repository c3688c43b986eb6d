"""penguiflow's ArtifactStore over artifact-store.

`HttpArtifactStore` has the seven async methods of penguiflow's `ArtifactStore` protocol
(`penguiflow.artifacts`), so a planner takes it as its artifact store. Its refs are penguiflow's own
`ArtifactRef` and `ArtifactScope` where penguiflow is installed, and this module's dataclasses of the
same fields elsewhere.

Which reference a read answers. Two sessions of a tenant that store the same bytes share one id, and
each holds its own reference to it (its own filename and source). A read that names no scope answers
the newest of them, whose description is the latest: the rule the service keeps for every client.
penguiflow's in-memory store answers the first put of an id instead, which is just as wrong for the
other session. What fixes it is saying who asks: a host that serves several sessions with one planner
wraps each run in `store.bind(scope)`, and reads inside it (get, get_ref, exists, delete) name that
scope's session and user. Not its trace, since penguiflow checks reads against tenant, user and
session only. An unbound delete removes every reference the tenant holds to that id.

Tenants. A token is one tenant. A host serving several passes a callable as `token`, which gets the
scope of each put and listing (and the bound scope, or None, on reads) and returns a token for that
scope's tenant; `token_minter` makes one from an HS256 secret.

Limits belong to the operator: `tenant_policy(retention)` is the ARTIFACT_STORE_TENANT_POLICIES entry
that matches a penguiflow ArtifactRetentionConfig. A store given a retention sends its ttl_seconds
with each put, and refuses a put over max_artifact_bytes before sending it, as penguiflow's does.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, TypeAlias, cast

import httpx

from . import models
from ._async import AsyncArtifactStoreClient
from ._core import DEFAULT_TIMEOUT
from .models import Scope
from .tokens import mint_hs256_token

__all__ = [
    "ArtifactRef",
    "ArtifactScope",
    "HttpArtifactStore",
    "RetentionConfig",
    "ScopeLike",
    "TenantMismatchError",
    "tenant_policy",
    "token_minter",
]


@dataclass
class ArtifactScope:
    """penguiflow's ArtifactScope, where penguiflow is not installed."""

    tenant_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    trace_id: str | None = None

    def model_dump(self, *, mode: str = "python", exclude_none: bool = False) -> dict[str, Any]:
        return _dump(self, exclude_none)


@dataclass
class ArtifactRef:
    """penguiflow's ArtifactRef, where penguiflow is not installed."""

    id: str
    mime_type: str | None = None
    size_bytes: int | None = None
    filename: str | None = None
    sha256: str | None = None
    scope: ArtifactScope | None = None
    namespace: str | None = None
    source: dict[str, Any] = field(default_factory=dict)

    def model_dump(self, *, mode: str = "python", exclude_none: bool = False) -> dict[str, Any]:
        # Every field is already JSON (strings, numbers, a decoded JSON object), so both modes agree.
        return _dump(self, exclude_none)


def _dump(value: Any, exclude_none: bool) -> dict[str, Any]:
    dumped = asdict(value)
    if exclude_none:
        dumped = {k: v for k, v in dumped.items() if v is not None}
        if isinstance(dumped.get("scope"), dict):
            dumped["scope"] = {k: v for k, v in dumped["scope"].items() if v is not None}
    return dumped


class ScopeLike(Protocol):
    """What a scope is read as: penguiflow's ArtifactScope, this module's, or any object like them."""

    @property
    def tenant_id(self) -> str | None: ...

    @property
    def user_id(self) -> str | None: ...

    @property
    def session_id(self) -> str | None: ...

    @property
    def trace_id(self) -> str | None: ...


class RetentionConfig(Protocol):
    """The fields of penguiflow's ArtifactRetentionConfig that matter here."""

    @property
    def ttl_seconds(self) -> int: ...

    @property
    def max_artifact_bytes(self) -> int: ...

    @property
    def max_session_bytes(self) -> int: ...

    @property
    def max_trace_bytes(self) -> int: ...

    @property
    def max_artifacts_per_session(self) -> int: ...

    @property
    def max_artifacts_per_trace(self) -> int: ...

    @property
    def cleanup_strategy(self) -> str: ...


ScopeInput: TypeAlias = "ScopeLike | Mapping[str, str | None] | None"
# Called with the scope of the call (penguiflow's ArtifactScope, or None); returns a token for its tenant.
TokenSource: TypeAlias = "str | Callable[[Any], str | Awaitable[str]]"

_SCOPE_FIELDS = ("tenant_id", "user_id", "session_id", "trace_id")


class TenantMismatchError(ValueError):
    """A put or listing for one tenant was answered by another: the token belongs to that other one."""


@functools.lru_cache(maxsize=None)
def _models() -> tuple[type[ArtifactRef], type[ArtifactScope]]:
    # Looked up on first use, not at import, so penguiflow stays optional and is imported at most once.
    try:
        module = importlib.import_module("penguiflow.artifacts")
    except ImportError:
        return ArtifactRef, ArtifactScope
    return cast("type[ArtifactRef]", module.ArtifactRef), cast("type[ArtifactScope]", module.ArtifactScope)


# The ids the service gives (docs/http-api.md): `{namespace}_{24 hex}`. Anything else, which the
# service would refuse as malformed, reads as missing here, as in penguiflow's own stores.
_ARTIFACT_ID = re.compile(r"[A-Za-z0-9._-]{1,128}_[0-9a-f]{24}")


def _is_artifact_id(value: object) -> bool:
    return isinstance(value, str) and _ARTIFACT_ID.fullmatch(value) is not None


def _scope_of(value: ScopeInput) -> ArtifactScope | None:
    if value is None:
        return None
    scope_class = _models()[1]
    if isinstance(value, scope_class):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - set(_SCOPE_FIELDS)
        if unknown:
            raise ValueError(f"A scope has the keys {', '.join(_SCOPE_FIELDS)}; not {', '.join(sorted(unknown))}.")
        parts = {name: value.get(name) for name in _SCOPE_FIELDS}
    else:
        parts = {name: getattr(value, name, None) for name in _SCOPE_FIELDS}
    return scope_class(**parts)


def _ref_of(stored: models.ArtifactRef) -> ArtifactRef:
    ref_class, scope_class = _models()
    held = stored.scope
    return ref_class(
        id=stored.id,
        mime_type=stored.mime_type,
        size_bytes=stored.size_bytes,
        filename=stored.filename,
        sha256=stored.sha256,
        scope=scope_class(
            tenant_id=held.tenant_id, user_id=held.user_id, session_id=held.session_id, trace_id=held.trace_id
        ),
        namespace=stored.namespace,
        source=dict(stored.source or {}),
    )


class HttpArtifactStore:
    """penguiflow's ArtifactStore protocol over artifact-store's HTTP API.

    `base_url` and `token` default to ARTIFACT_STORE_URL and ARTIFACT_STORE_TOKEN. `token` is a string
    (one tenant), or a callable as the module's docstring says. Or give a ready `client`, which then
    brings its own URL, token and settings. `retention` (penguiflow's ArtifactRetentionConfig) sets each put's
    ttl and the largest put sent. `scope_filter` is bound outside any `bind()`: as in penguiflow's
    in-memory store, a put that names no scope is made in it, and reads name its session and user.
    """

    def __init__(
        self,
        base_url: str | None = None,
        token: TokenSource | None = None,
        *,
        retention: RetentionConfig | None = None,
        scope_filter: ScopeInput = None,
        client: AsyncArtifactStoreClient | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        retries: int = 3,
    ) -> None:
        if client is not None and (base_url is not None or token is not None):
            raise ValueError("A given client brings its own base_url and token: pass one or the other.")
        self.retention = retention
        self._mint = token if callable(token) else None
        plain = None if callable(token) else token
        # Per store, since a host may run stores of different services side by side. `scope_filter`
        # (penguiflow's InMemoryArtifactStore has the same) is the scope bound outside any bind().
        self._bound: ContextVar[ArtifactScope | None] = ContextVar(
            "artifact_store_bound", default=_scope_of(scope_filter)
        )
        self._asking: ContextVar[ArtifactScope | None] = ContextVar("artifact_store_asking", default=None)
        self._owns_client = client is None
        # The scope is penguiflow's to give with each call: an ARTIFACT_STORE_SESSION must not narrow it.
        if client is None:
            client = AsyncArtifactStoreClient(
                base_url, self._token if self._mint else plain, scope=Scope(), timeout=timeout, retries=retries
            )
        self._client = client

    @property
    def client(self) -> AsyncArtifactStoreClient:
        """The plain client underneath, for what penguiflow's protocol has no words for (links, expiry)."""
        return self._client

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> HttpArtifactStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @contextmanager
    def bind(self, scope: ScopeInput) -> Iterator[HttpArtifactStore]:
        """Reads inside name this scope's session and user, puts that name no scope are made in it
        (`scope or scope_filter`, as penguiflow's store does), and its token is minted for this scope.

        A context variable holds it, so tasks started inside inherit it and concurrent runs each keep
        their own.
        """
        reset = self._bound.set(_scope_of(scope))
        try:
            yield self
        finally:
            self._bound.reset(reset)

    # Puts

    async def put_bytes(
        self,
        data: bytes,
        *,
        mime_type: str | None = None,
        filename: str | None = None,
        namespace: str | None = None,
        scope: ScopeInput = None,
        meta: dict[str, Any] | None = None,
    ) -> ArtifactRef:
        retention = self.retention
        if retention is not None and len(data) > retention.max_artifact_bytes:
            # penguiflow's words, which its callers match on ("exceeds limit").
            raise ValueError(
                f"Artifact size ({len(data)} bytes) exceeds limit ({retention.max_artifact_bytes} bytes, "
                "the retention's max_artifact_bytes)"
            )
        asked = _scope_of(scope) or self._bound.get()
        where = _where(asked)
        with self._asking_for(asked):
            stored = await self._client.put(
                bytes(data),
                mime_type=mime_type,
                filename=filename,
                namespace=namespace or None,
                source=meta,
                ttl=_ttl_of(retention),
                session=where.session,
                trace=where.trace,
                user=where.user,
            )
            if asked is not None and asked.tenant_id is not None and stored.scope.tenant_id != asked.tenant_id:
                left = not await self._withdraw(stored)
                raise self._mismatch(asked.tenant_id, stored.scope.tenant_id, left=stored.id if left else None)
        return _ref_of(stored)

    async def put_text(
        self,
        text: str,
        *,
        mime_type: str = "text/plain",
        filename: str | None = None,
        namespace: str | None = None,
        scope: ScopeInput = None,
        meta: dict[str, Any] | None = None,
    ) -> ArtifactRef:
        return await self.put_bytes(
            text.encode("utf-8"), mime_type=mime_type, filename=filename, namespace=namespace, scope=scope, meta=meta
        )

    # Reads

    async def get(self, artifact_id: str) -> bytes | None:
        if not _is_artifact_id(artifact_id):
            return None
        with self._reading() as where:
            return await self._client.get(artifact_id, session=where.session, user=where.user)

    async def get_ref(self, artifact_id: str) -> ArtifactRef | None:
        if not _is_artifact_id(artifact_id):
            return None
        with self._reading() as where:
            stored = await self._client.meta(artifact_id, session=where.session, user=where.user)
        return None if stored is None else _ref_of(stored)

    async def delete(self, artifact_id: str) -> bool:
        if not _is_artifact_id(artifact_id):
            return False
        with self._reading() as where:
            return await self._client.delete(artifact_id, session=where.session, user=where.user)

    async def exists(self, artifact_id: str) -> bool:
        if not _is_artifact_id(artifact_id):
            return False
        with self._reading() as where:
            return await self._client.exists(artifact_id, session=where.session, user=where.user)

    async def list(self, *, scope: ScopeInput = None) -> builtins.list[ArtifactRef]:
        asked = _scope_of(scope)
        with self._asking_for(asked):
            where = _where(asked)
            listed = self._client.iter_list(session=where.session, trace=where.trace, user=where.user)
            held = [stored async for stored in listed]
        if asked is not None and asked.tenant_id is not None:
            for stored in held:
                if stored.scope.tenant_id != asked.tenant_id:
                    raise self._mismatch(asked.tenant_id, stored.scope.tenant_id)
        return [_ref_of(stored) for stored in held]

    # Tokens and tenants

    def _token(self) -> str | Awaitable[str]:
        assert self._mint is not None
        return self._mint(self._asking.get())

    @contextmanager
    def _asking_for(self, scope: ArtifactScope | None) -> Iterator[None]:
        # The client asks for its token with no arguments; this is how it learns whom it asks for.
        reset = self._asking.set(scope)
        try:
            yield
        finally:
            self._asking.reset(reset)

    @contextmanager
    def _reading(self) -> Iterator[Scope]:
        bound = self._bound.get()
        with self._asking_for(bound):
            yield _where(bound, trace=False)

    async def _withdraw(self, stored: models.ArtifactRef) -> bool:
        """Deletes the reference a put just made, unless only an unnarrowed delete could reach it."""
        held = stored.scope
        # Unnarrowed, the delete would take every reference the tenant holds to these bytes.
        if not (held.session_id or held.trace_id or held.user_id):
            return False
        await self._client.delete(stored.id, session=held.session_id, trace=held.trace_id, user=held.user_id)
        return True

    def _mismatch(self, asked: str, answered: str, *, left: str | None = None) -> TenantMismatchError:
        if self._mint is not None:
            message = (
                f"The token callable gave a token of tenant {answered!r} for a scope of tenant {asked!r}: "
                "it must mint for the tenant of the scope it is given."
            )
        else:
            message = (
                f"This store's token belongs to tenant {answered!r}, and the scope names tenant {asked!r}. "
                "A token is one tenant: to serve several, pass a token callable that mints one per tenant "
                "(HttpArtifactStore(token=token_minter(secret)))."
            )
        if left is not None:
            message += (
                f" The put's reference to {left} in tenant {answered!r} names no session, trace or user, so it "
                "was left to expire: deleting it would take that tenant's other references to it too."
            )
        return TenantMismatchError(message)


def _where(scope: ArtifactScope | None, *, trace: bool = True) -> Scope:
    """The parts of a scope a call names: reads leave the trace out, as penguiflow's read checks do."""
    if scope is None:
        return Scope()
    return Scope(session=scope.session_id, trace=scope.trace_id if trace else None, user=scope.user_id)


_STRATEGIES = {"lru": "lru", "fifo": "fifo", "none": "never"}


# The service's maximum reference lifetime unless its operator set another (ARTIFACT_STORE_MAX_TTL_SECONDS).
SERVICE_MAX_TTL_SECONDS = 7 * 24 * 3600


def _ttl_of(retention: RetentionConfig | None) -> int | str | None:
    """The ttl a put sends: the retention's, "never" for penguiflow's 0 or less, else the service's default."""
    if retention is None:
        return None
    return "never" if retention.ttl_seconds <= 0 else retention.ttl_seconds


def tenant_policy(retention: RetentionConfig) -> dict[str, Any]:
    """The ARTIFACT_STORE_TENANT_POLICIES entry that makes a tenant's limits those of `retention`.

    penguiflow's `none` (evict nothing, let puts go past the limits) is the service's `never`.
    """
    strategy = _STRATEGIES.get(retention.cleanup_strategy)
    if strategy is None:
        raise ValueError(
            f"cleanup_strategy {retention.cleanup_strategy!r} is not one of penguiflow's: {', '.join(_STRATEGIES)}."
        )
    # penguiflow keeps artifacts for good when ttl_seconds is 0 or less; the service does that where
    # the operator allows it. A longer ttl than the service's default maximum raises the maximum too.
    ttl: dict[str, Any] = (
        {"allowNoExpiry": True}
        if retention.ttl_seconds <= 0
        else {
            "defaultTtlSeconds": retention.ttl_seconds,
            "maxTtlSeconds": max(retention.ttl_seconds, SERVICE_MAX_TTL_SECONDS),
        }
    )
    return {
        **ttl,
        "maxArtifactBytes": retention.max_artifact_bytes,
        "maxSessionBytes": retention.max_session_bytes,
        "maxTraceBytes": retention.max_trace_bytes,
        "maxArtifactsPerSession": retention.max_artifacts_per_session,
        "maxArtifactsPerTrace": retention.max_artifacts_per_trace,
        "cleanupStrategy": strategy,
    }


def token_minter(
    secret: str | bytes,
    *,
    kid: str | None = None,
    tenant: str | None = None,
    perms: Iterable[str] = ("read", "write"),
    ttl_seconds: int = 300,
) -> Callable[[ScopeInput], str]:
    """A token callable for HttpArtifactStore: tenant-wide HS256 tokens for the scope's tenant.

    `tenant` serves scopes that name none (reads outside `bind`). The scope's user is the token's
    subject. A token is reused for its tenant and user until shortly before it expires.
    """
    perms = tuple(perms)
    # Renewed this long before expiry, so a token never lapses between minting and the service's check.
    margin = min(60.0, ttl_seconds / 5)
    minted: dict[tuple[str, str | None], tuple[str, float]] = {}

    def mint(scope: ScopeInput) -> str:
        asked = _scope_of(scope)
        tenant_id = (asked.tenant_id if asked is not None else None) or tenant
        if tenant_id is None:
            raise ValueError(
                "This call's scope names no tenant, and token_minter was given no tenant= for such calls: "
                "bind the store to a scope with a tenant_id, or pass tenant=."
            )
        user = asked.user_id if asked is not None else None
        now = time.time()
        cached = minted.get((tenant_id, user))
        if cached is not None and cached[1] > now:
            return cached[0]
        for key in [key for key, (_, until) in minted.items() if until <= now]:
            del minted[key]
        token = mint_hs256_token(secret, tenant=tenant_id, sub=user, perms=perms, ttl_seconds=ttl_seconds, kid=kid)
        minted[(tenant_id, user)] = (token, now + ttl_seconds - margin)
        return token

    return mint
