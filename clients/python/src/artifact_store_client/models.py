"""What the service answers, as dataclasses with snake_case fields.

Each answer is checked while it is read: a missing or mistyped field raises ValueError naming it, so
a broken answer never becomes a half-filled ref. Fields a newer service adds are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Generic, Literal, TypeVar

FetchMode = Literal["direct", "proxy"]


@dataclass(frozen=True)
class Scope:
    """The session, trace and user a tenant-wide token names; a session-bound token carries its own."""

    session: str | None = None
    trace: str | None = None
    user: str | None = None


@dataclass(frozen=True)
class ArtifactScope:
    """Who holds a reference: the tenant always, and optionally a user, session and trace inside it."""

    tenant_id: str
    user_id: str | None = None
    session_id: str | None = None
    trace_id: str | None = None

    @classmethod
    def from_json(cls, data: object, at: str = "scope") -> ArtifactScope:
        r = _Reader(data, at)
        return cls(
            tenant_id=r.text("tenantId"),
            user_id=r.text("userId", required=False),
            session_id=r.text("sessionId", required=False),
            trace_id=r.text("traceId", required=False),
        )


@dataclass(frozen=True)
class ArtifactRef:
    """What an agent holds instead of the bytes."""

    id: str
    mime_type: str
    size_bytes: int
    sha256: str
    namespace: str
    scope: ArtifactScope
    created_at: datetime
    filename: str | None = None
    source: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    last_accessed_at: datetime | None = None
    # None: the reference never expires.
    expires_at: datetime | None = None
    url: str | None = None
    fetch_mode: FetchMode | None = None
    url_expires_at: datetime | None = None
    # A named version's name (in the app that is its namespace) and number; None on other refs.
    name: str | None = None
    version: int | None = None

    @classmethod
    def from_json(cls, data: object, at: str = "") -> ArtifactRef:
        r = _Reader(data, at)
        return cls(
            id=r.text("id"),
            mime_type=r.text("mimeType"),
            size_bytes=r.count("sizeBytes"),
            sha256=r.text("sha256"),
            namespace=r.text("namespace"),
            scope=ArtifactScope.from_json(r.value("scope"), r.path("scope")),
            created_at=r.time("createdAt"),
            filename=r.text("filename", required=False),
            source=r.mapping("source", required=False),
            meta=r.mapping("meta", required=False),
            last_accessed_at=r.time("lastAccessedAt", required=False),
            expires_at=r.time("expiresAt", required=False),
            url=r.text("url", required=False),
            fetch_mode=r.fetch_mode(required=False),
            url_expires_at=r.time("urlExpiresAt", required=False),
            name=r.text("name", required=False),
            version=r.count("version", required=False),
        )


@dataclass(frozen=True)
class Page:
    """One page of a listing, newest first; `next_cursor` asks for the next one."""

    items: list[ArtifactRef]
    next_cursor: str | None = None

    @classmethod
    def from_json(cls, data: object) -> Page:
        r = _Reader(data, "")
        return cls(
            items=[ArtifactRef.from_json(item, f"items[{i}]") for i, item in enumerate(r.items())],
            next_cursor=r.text("nextCursor", required=False),
        )


NameScopeKind = Literal["session", "user"]


@dataclass(frozen=True)
class NameInfo:
    """A name with a live version: `scope` is "user" (user-wide) or "session" (in the listed session)."""

    name: str
    scope: NameScopeKind
    latest_version: int
    versions: int
    updated_at: datetime

    @classmethod
    def from_json(cls, data: object, at: str = "") -> NameInfo:
        r = _Reader(data, at)
        scope = r.text("scope")
        if scope not in ("session", "user"):
            raise ValueError(f"field {r.path('scope')}: {scope!r} is neither session nor user")
        return cls(
            name=r.text("name"),
            scope=scope,
            latest_version=r.count("latestVersion"),
            versions=r.count("versions"),
            updated_at=r.time("updatedAt"),
        )


@dataclass(frozen=True)
class NamePage:
    """One page of names, by name; `next_cursor` asks for the next one."""

    items: list[NameInfo]
    next_cursor: str | None = None

    @classmethod
    def from_json(cls, data: object) -> NamePage:
        r = _Reader(data, "")
        return cls(
            items=[NameInfo.from_json(item, f"items[{i}]") for i, item in enumerate(r.items())],
            next_cursor=r.text("nextCursor", required=False),
        )


def versions_from_json(data: object) -> list[ArtifactRef]:
    """`{ items }` of GET /v1/names/{app}/versions: the live versions' refs, oldest first."""
    r = _Reader(data, "")
    return [ArtifactRef.from_json(item, f"items[{i}]") for i, item in enumerate(r.items())]


@dataclass(frozen=True)
class LoadedVersion:
    """A named version read whole: its ref (with `name` and `version`) and its bytes."""

    ref: ArtifactRef
    data: bytes


Chunks = TypeVar("Chunks")


@dataclass(frozen=True)
class StreamedVersion(Generic[Chunks]):
    """A named version as it arrives: its ref, and its bytes as an iterator of chunks (async for the
    async client), readable while the `with` block that gave it is open."""

    ref: ArtifactRef
    chunks: Chunks


@dataclass(frozen=True)
class SessionEnd:
    """What ending a session removed: `refs` references (`versions` of them named versions, whose
    names went too), which held `bytes` bytes, each counting its artifact's size."""

    session_id: str
    refs: int
    bytes: int
    versions: int

    @classmethod
    def from_json(cls, data: object) -> SessionEnd:
        r = _Reader(data, "")
        return cls(
            session_id=r.text("sessionId"),
            refs=r.count("refs"),
            bytes=r.count("bytes"),
            versions=r.count("versions"),
        )


@dataclass(frozen=True)
class DownloadLink:
    """A link a browser can GET without a token, until `url_expires_at`."""

    url: str
    fetch_mode: FetchMode
    url_expires_at: datetime
    mime_type: str
    size_bytes: int

    @classmethod
    def from_json(cls, data: object) -> DownloadLink:
        r = _Reader(data, "")
        fetch_mode = r.fetch_mode(required=True)
        assert fetch_mode is not None
        return cls(
            url=r.text("url"),
            fetch_mode=fetch_mode,
            url_expires_at=r.time("urlExpiresAt"),
            mime_type=r.text("mimeType"),
            size_bytes=r.count("sizeBytes"),
        )


@dataclass(frozen=True)
class UploadTicket:
    """Where to PUT the bytes of a direct upload: `url` with `headers`, and no Authorization."""

    upload_id: str
    url: str
    method: str = "PUT"
    headers: dict[str, str] = field(default_factory=dict)
    expires_at: datetime | None = None

    @classmethod
    def from_json(cls, data: object) -> UploadTicket:
        r = _Reader(data, "")
        headers = r.mapping("headers", required=False) or {}
        if not all(isinstance(v, str) for v in headers.values()):
            raise ValueError("field headers: expected string values")
        return cls(
            upload_id=r.text("uploadId"),
            url=r.text("url"),
            method=r.text("method", required=False) or "PUT",
            headers=headers,
            expires_at=r.time("expiresAt", required=False),
        )


EventType = Literal["artifact.stored", "artifact.deleted", "artifact.evicted", "artifact.expired"]
EVENT_TYPES: frozenset[str] = frozenset(
    {"artifact.stored", "artifact.deleted", "artifact.evicted", "artifact.expired"}
)


@dataclass(frozen=True)
class ArtifactEvent:
    """A change to a reference; `id` resumes the stream right after it."""

    id: str
    type: EventType
    ref: ArtifactRef
    at: datetime

    @classmethod
    def from_json(cls, event_id: str, data: object) -> ArtifactEvent:
        r = _Reader(data, "")
        kind = r.text("type")
        if kind not in EVENT_TYPES:
            raise ValueError(f"field type: {kind!r} is not an artifact event")
        return cls(id=event_id, type=kind, ref=ArtifactRef.from_json(r.value("ref"), "ref"), at=r.time("at"))


def parse_time(value: str) -> datetime:
    """ISO 8601 as the service writes it (`…Z`), which fromisoformat reads only from Python 3.11 on."""
    parsed = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


class _Reader:
    """Typed access to one JSON object's fields, with errors that name the field's path."""

    def __init__(self, data: object, at: str) -> None:
        if not isinstance(data, Mapping):
            raise ValueError(f"{'field ' + at if at else 'the answer'}: expected an object")
        self._data = data
        self._at = at

    def path(self, name: str) -> str:
        return f"{self._at}.{name}" if self._at else name

    def value(self, name: str) -> object:
        if name not in self._data:
            raise ValueError(f"field {self.path(name)}: missing")
        return self._data[name]

    def items(self) -> list[Any]:
        items = self.value("items")
        if not isinstance(items, list):
            raise ValueError(f"field {self.path('items')}: expected a list")
        return items

    def _get(self, name: str, kind: type | tuple[type, ...], what: str, required: bool) -> Any:
        value = self._data.get(name)
        if value is None:
            if required:
                raise ValueError(f"field {self.path(name)}: missing")
            return None
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"field {self.path(name)}: expected {what}, got {type(value).__name__}")
        return value

    def text(self, name: str, *, required: bool = True) -> Any:
        return self._get(name, str, "a string", required)

    def count(self, name: str, *, required: bool = True) -> Any:
        value = self._get(name, int, "a whole number", required)
        if value is not None and value < 0:
            raise ValueError(f"field {self.path(name)}: expected a non-negative number")
        return value

    def mapping(self, name: str, *, required: bool = True) -> Any:
        value = self._get(name, dict, "an object", required)
        return dict(value) if value is not None else None

    def time(self, name: str, *, required: bool = True) -> Any:
        value = self.text(name, required=required)
        if value is None:
            return None
        try:
            return parse_time(value)
        except ValueError:
            raise ValueError(f"field {self.path(name)}: {value!r} is not an ISO 8601 time") from None

    def fetch_mode(self, *, required: bool) -> Any:
        value = self.text("fetchMode", required=required)
        if value is not None and value not in ("direct", "proxy"):
            raise ValueError(f"field {self.path('fetchMode')}: {value!r} is neither direct nor proxy")
        return value
