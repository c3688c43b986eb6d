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
    """Where to PUT the bytes of a direct upload: `url` with `headers`, and no Authorization.

    `kind` is "put" (one PUT to `url`) or, above the service's threshold on its s3 driver,
    "multipart": then `url` is empty and the bytes go in `part_count` parts of `part_size` bytes
    (the last holds the rest), each PUT to the URL the service presigns for it.
    """

    upload_id: str
    url: str
    method: str = "PUT"
    headers: dict[str, str] = field(default_factory=dict)
    expires_at: datetime | None = None
    kind: str = "put"
    size_bytes: int | None = None
    part_size: int | None = None
    part_count: int | None = None

    @classmethod
    def from_json(cls, data: object) -> UploadTicket:
        r = _Reader(data, "")
        if r.text("kind", required=False) == "multipart":
            part_size = r.count("partSize")
            if part_size < 1:
                raise ValueError("field partSize: expected a positive number")
            return cls(
                upload_id=r.text("uploadId"),
                url="",
                expires_at=r.time("expiresAt", required=False),
                kind="multipart",
                size_bytes=r.count("sizeBytes"),
                part_size=part_size,
                part_count=r.count("partCount"),
            )
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


ViewKind = Literal["text", "pdf", "zip", "image"]
VIEW_KINDS: frozenset[str] = frozenset({"text", "pdf", "zip", "image"})


def _view_head(r: _Reader) -> dict[str, Any]:
    """The fields every view answer shares: where it came from, and `text`, what a model reads."""
    view = r.text("view")
    if view not in VIEW_KINDS:
        raise ValueError(f"field {r.path('view')}: {view!r} is not one of {', '.join(sorted(VIEW_KINDS))}")
    return {
        "id": r.text("id"),
        "mime_type": r.text("mimeType"),
        "size_bytes": r.count("sizeBytes"),
        "view": view,
        "text": r.text("text"),
        "filename": r.text("filename", required=False),
        "page": r.count("page", required=False),
        "page_count": r.count("pageCount", required=False),
        "entry": r.text("entry", required=False),
    }


@dataclass(frozen=True)
class ReadResult:
    """Lines of an artifact's view (GET /v1/artifacts/{id}/text), from line `offset` on.

    `text` is what a model reads: the lines, numbered, and how to go on, within the budget. Continue
    with `read(id, offset=next_offset, column=next_column)` until `next_offset` is None. `page` and
    `page_count` are a PDF's, `entry` a ZIP entry's; `width`, `height` and `url` an image's.
    """

    id: str
    mime_type: str
    size_bytes: int
    view: ViewKind
    offset: int
    lines: list[str]
    total_lines: int
    next_offset: int | None
    text: str
    filename: str | None = None
    page: int | None = None
    page_count: int | None = None
    entry: str | None = None
    # Set when the first line continues a line cut by the previous answer: its first character (1-based).
    column: int | None = None
    # With next_offset: the last line was cut, and goes on at this character of it.
    next_column: int | None = None
    width: int | None = None
    height: int | None = None
    url: str | None = None

    @classmethod
    def from_json(cls, data: object) -> ReadResult:
        r = _Reader(data, "")
        return cls(
            **_view_head(r),
            offset=r.count("offset"),
            lines=r.strings("lines"),
            total_lines=r.count("totalLines"),
            next_offset=r.count("nextOffset", required=False),
            column=r.count("column", required=False),
            next_column=r.count("nextColumn", required=False),
            width=r.count("width", required=False),
            height=r.count("height", required=False),
            url=r.text("url", required=False),
        )


@dataclass(frozen=True)
class SearchLine:
    """One line of a search answer: a match, or a context line around one (`match` False)."""

    line: int
    text: str
    match: bool
    # A PDF's: the page of this line (line numbers count within a page).
    page: int | None = None

    @classmethod
    def from_json(cls, data: object, at: str) -> SearchLine:
        r = _Reader(data, at)
        return cls(
            line=r.count("line"),
            text=r.text("text"),
            match=r.flag("match"),
            page=r.count("page", required=False),
        )


@dataclass(frozen=True)
class SearchResult:
    """The lines of a view that match a pattern (GET /v1/artifacts/{id}/search), with their context.

    `total_matches` counts the matching lines from `offset` (or the start) to the end of the view;
    `lines` holds `returned_matches` of them. The rest: search again with `offset=next_offset` (and
    `page=next_page` for a PDF) until `next_offset` is None.
    """

    id: str
    mime_type: str
    size_bytes: int
    view: ViewKind
    pattern: str
    regex: bool
    ignore_case: bool
    total_matches: int
    returned_matches: int
    lines: list[SearchLine]
    next_offset: int | None
    text: str
    filename: str | None = None
    page: int | None = None
    page_count: int | None = None
    entry: str | None = None
    next_page: int | None = None

    @classmethod
    def from_json(cls, data: object) -> SearchResult:
        r = _Reader(data, "")
        return cls(
            **_view_head(r),
            pattern=r.text("pattern"),
            regex=r.flag("regex"),
            ignore_case=r.flag("ignoreCase"),
            total_matches=r.count("totalMatches"),
            returned_matches=r.count("returnedMatches"),
            lines=[SearchLine.from_json(item, f"lines[{i}]") for i, item in enumerate(r.array("lines"))],
            next_offset=r.count("nextOffset", required=False),
            next_page=r.count("nextPage", required=False),
        )


@dataclass(frozen=True)
class QueryMatch:
    """A value a JSONPath selected, at its RFC 9535 normalized `path` (e.g. `$['issues'][3]['title']`).

    `cut` says, in words, what was left out when the value was cut to fit the budget.
    """

    path: str
    value: Any
    cut: str | None = None

    @classmethod
    def from_json(cls, data: object, at: str) -> QueryMatch:
        r = _Reader(data, at)
        return cls(path=r.text("path"), value=r.value("value"), cut=r.text("cut", required=False))


@dataclass(frozen=True)
class QueryResult:
    """The values an RFC 9535 JSONPath selects in a JSON artifact (GET /v1/artifacts/{id}/query).

    `total_matches` counts them in the whole document, unless `total_is_lower_bound`: the service
    stopped counting at its cap, and there are at least that many (narrow the path to count exactly).
    `matches` holds the first ones, in document order.
    """

    id: str
    mime_type: str
    size_bytes: int
    view: ViewKind
    path: str
    total_matches: int
    matches: list[QueryMatch]
    text: str
    filename: str | None = None
    page: int | None = None
    page_count: int | None = None
    entry: str | None = None
    total_is_lower_bound: bool = False

    @classmethod
    def from_json(cls, data: object) -> QueryResult:
        r = _Reader(data, "")
        return cls(
            **_view_head(r),
            path=r.text("path"),
            total_matches=r.count("totalMatches"),
            total_is_lower_bound=r.flag("totalIsLowerBound", required=False),
            matches=[QueryMatch.from_json(item, f"matches[{i}]") for i, item in enumerate(r.array("matches"))],
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
        return self.array("items")

    def array(self, name: str) -> list[Any]:
        value = self.value(name)
        if not isinstance(value, list):
            raise ValueError(f"field {self.path(name)}: expected a list")
        return value

    def strings(self, name: str) -> list[str]:
        value = self.array(name)
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise ValueError(f"field {self.path(name)}[{i}]: expected a string, got {type(item).__name__}")
        return list(value)

    def flag(self, name: str, *, required: bool = True) -> bool:
        """true or false; absent (or null) is False when not required."""
        if not required and self._data.get(name) is None:
            return False
        value = self.value(name)
        if not isinstance(value, bool):
            raise ValueError(f"field {self.path(name)}: expected true or false, got {type(value).__name__}")
        return value

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
