"""What the two clients share: settings, and every operation written once, without I/O.

An operation is a generator. It yields a `Call` when it needs the service (or `HashBody` when it
needs a body's sha256), and the client sends back the successful `Answer`, or throws the
ArtifactStoreError the request ended in. The sync client drives these with httpx.Client, the async
one with httpx.AsyncClient, so the two differ only where I/O is awaited.
"""

from __future__ import annotations

import json
import mimetypes
import os
import re
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, TypeVar, Union
from urllib.parse import quote

import httpx

from ._bodies import Body, BytesBody, FileBody, PutData, body_of
from ._headers import OCTET_STREAM, put_headers, scope_headers
from ._ranges import ByteRange, range_header
from ._retry import RETRYABLE_STATUSES, RetryPolicy
from .errors import ArtifactStoreError, BackendUnavailableError, BadRequestError, NotFoundError
from .models import (
    ArtifactRef,
    DownloadLink,
    LoadedVersion,
    NamePage,
    Page,
    QueryResult,
    ReadResult,
    Scope,
    SearchResult,
    SessionEnd,
    UploadTicket,
    versions_from_json,
)

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:8787"
DIRECT_UPLOAD_ABOVE_BYTES = 8 * 1024 * 1024
DEFAULT_TIMEOUT = 60.0



@dataclass
class Call:
    method: str
    # A path under the base URL; an absolute URL when `external`.
    url: str
    params: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body: Body | None = None
    # A presigned URL: it carries its own authority, so no token and no client headers go with it.
    external: bool = False
    # Not idempotent (a name's next version): a connection error is not retried, since the first
    # attempt may have committed. Refusals that commit nothing (429, 503) still are.
    once: bool = False
    # False: one attempt, whatever happens; the operation decides what comes next (a tus PATCH asks
    # where the upload stands before it sends again).
    retry: bool = True
    # Seconds for this request instead of the client's timeout (completing an upload re-reads it).
    timeout: float | None = None

    @property
    def replayable(self) -> bool:
        return self.retry and (self.body is None or self.body.replayable)

    def retryable(self, status: int) -> bool:
        # A blob store's 500 is worth another try; the service says 503 when it means that.
        return status in RETRYABLE_STATUSES or (self.external and status >= 500)

    def request_headers(self) -> dict[str, str]:
        headers = dict(self.headers)
        if self.body is not None and self.body.size is not None:
            headers["Content-Length"] = str(self.body.size)
        return headers

    def target(self, base_url: str) -> str:
        """Who answers, as messages name it."""
        if not self.external:
            return f"the artifact store at {base_url}"
        url = httpx.URL(self.url)
        return f"the blob store at {url.scheme}://{url.netloc.decode()}"

    def describe(self) -> str:
        return f"{self.method} {self.url.split('?')[0]}"


def json_call(method: str, path: str, value: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> Call:
    content = json.dumps({k: v for k, v in value.items() if v is not None}).encode()
    return Call(method, path, headers={**(headers or {}), "Content-Type": "application/json"}, body=BytesBody(content))


@dataclass(frozen=True)
class HashBody:
    body: Body


@dataclass(frozen=True)
class ReadSlice:
    """`size` bytes of a body from `start`, read off the event loop by the async client."""

    body: Body
    start: int
    size: int


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Together:
    """Runs `ops` (each an operation of its own), at most `limit` at a time; sends back their
    results in order. The first failure stops new ones from starting, and is raised once the
    running ones are over."""

    ops: tuple[Any, ...]
    limit: int


@dataclass(frozen=True)
class Answer:
    call: Call
    status: int
    headers: httpx.Headers
    content: bytes

    def parse(self, read: Callable[[Any], T], name: str) -> T:
        """The answer's JSON as `read` makes it; anything else means the URL is not artifact-store."""
        try:
            return read(json.loads(self.content))
        except ValueError as err:
            raise BackendUnavailableError(
                f"The service's answer to {self.call.describe()} did not match {name}: {err}. "
                "Is base_url pointing at artifact-store?",
                status=self.status,
            ) from err


Step = Union[Call, HashBody, ReadSlice, Sleep, Together]
Op = Generator[Step, Any, T]


def artifact_path(artifact_id: str) -> str:
    return f"/v1/artifacts/{quote(artifact_id, safe='')}"


def names_path(app: str, tail: str = "") -> str:
    # URLs drop "." and ".." path segments (escaped too): such an app would reach another route.
    if not isinstance(app, str) or app in ("", ".", ".."):
        raise BadRequestError(f"Invalid app {app!r}: it travels in the URL path, so it cannot be empty, '.' or '..'.")
    return f"/v1/names/{quote(app, safe='')}{tail}"


def session_path(session_id: str) -> str:
    """DELETE /v1/sessions/{id}; the id is checked as the service checks it, and must survive a URL path."""
    if not isinstance(session_id, str) or not 1 <= len(session_id) <= 256:
        size = f" ({len(session_id)} characters)" if isinstance(session_id, str) else ""
        raise BadRequestError(f"Invalid session id{size}: session ids have 1-256 characters.")
    if session_id in (".", ".."):
        raise BadRequestError(f"Invalid session id {session_id!r}: it cannot travel in a URL path.")
    return f"/v1/sessions/{quote(session_id, safe='')}"


@dataclass(frozen=True)
class NameWhere:
    """Which names a call means, as the /v1/names routes read it: a user (None: the token's), and a
    session (None: the token's, else user-wide) or, when `user_wide`, no session at all."""

    user: str | None = None
    session: str | None = None
    user_wide: bool = False

    def params(self, name: str | None = None, version: int | None = None) -> dict[str, str]:
        params: dict[str, str] = {}
        if name is not None:
            params["name"] = name
        if self.user is not None:
            params["user"] = self.user
        if self.user_wide:
            params["scope"] = "user"
        elif self.session is not None:
            params["session"] = self.session
        if version is not None:
            params["version"] = str(version)
        return params


def view_params(named: Mapping[str, Any]) -> dict[str, str]:
    """A view's options as query parameters: whole numbers, strings and flags (`true` / `false`).

    A value of another type is refused before anything is sent, so `offset=1.5` or `regex="yes"`
    never reaches the service as something it would read differently.
    """
    params: dict[str, str] = {}
    for name, value in named.items():
        if value is None:
            continue
        # Named in messages as the Python argument (ignore_case), not the query parameter (ignoreCase).
        argument = re.sub("([A-Z])", r"_\1", name).lower()
        if name in _VIEW_FLAGS:
            if not isinstance(value, bool):
                raise BadRequestError(f"{argument} must be True or False, not {value!r}.")
            params[name] = "true" if value else "false"
        elif name in _VIEW_TEXT_PARAMS:
            if not isinstance(value, str):
                raise BadRequestError(f"{argument} must be a string, not {value!r}.")
            params[name] = value
        else:
            if not isinstance(value, int) or isinstance(value, bool):
                raise BadRequestError(f"{argument} must be a whole number, not {value!r}.")
            params[name] = str(value)
    return params


# The view options that are strings, and those that are flags; the others are whole numbers.
_VIEW_TEXT_PARAMS = frozenset({"pattern", "path", "entry"})
_VIEW_FLAGS = frozenset({"regex", "ignoreCase"})


def query_time(value: datetime | str) -> str:
    if isinstance(value, str):
        return value
    utc = value.astimezone(timezone.utc)
    return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ClientCore:
    """Settings and operations of one client."""

    def __init__(
        self,
        base_url: str | None,
        token: object,
        scope: Scope | Mapping[str, str] | None,
        retry: RetryPolicy,
        direct_upload_above_bytes: float,
    ) -> None:
        self.base_url = (base_url or os.environ.get("ARTIFACT_STORE_URL") or DEFAULT_URL).rstrip("/")
        if not self.base_url.lower().startswith(("http://", "https://")):
            raise ValueError(f"base_url {self.base_url!r} must be an http(s) URL.")
        self.token = token if token is not None else os.environ.get("ARTIFACT_STORE_TOKEN")
        if scope is None:
            scope = Scope(session=os.environ.get("ARTIFACT_STORE_SESSION") or None)
        self.scope = scope if isinstance(scope, Scope) else Scope(**scope)
        self.retry = retry
        self.direct_upload_above_bytes = direct_upload_above_bytes
        # Learnt from the first direct upload tried: False once the service said it has none.
        self.direct_uploads_offered: bool | None = None

    def scope_for(self, session: str | None, trace: str | None, user: str | None) -> Scope:
        return Scope(
            session=session if session is not None else self.scope.session,
            trace=trace if trace is not None else self.scope.trace,
            user=user if user is not None else self.scope.user,
        )

    def name_where(self, user_id: str | None, session_id: str | None, user_wide: bool) -> NameWhere:
        """A name's user and session, the client's own unless given; user-wide names have no session."""
        return NameWhere(
            user=user_id if user_id is not None else self.scope.user,
            session=None if user_wide else (session_id if session_id is not None else self.scope.session),
            user_wide=user_wide,
        )

    # Puts

    def put(
        self,
        data: PutData,
        *,
        mime_type: str | None,
        filename: str | None,
        namespace: str | None,
        meta: Mapping[str, Any] | None,
        source: Mapping[str, Any] | None,
        ttl: int | str | None,
        sha256: str | None,
        scope: Scope,
    ) -> Op[ArtifactRef]:
        body = body_of(data)
        headers = put_headers(
            mime_type=mime_type or body.default_mime or OCTET_STREAM,
            filename=filename,
            namespace=namespace,
            meta=meta,
            source=source,
            ttl=ttl,
            sha256=sha256,
            scope=scope,
        )
        if (
            body.size is not None
            and body.size > self.direct_upload_above_bytes
            and self.direct_uploads_offered is not False
        ):
            ticket_of = self.begin_upload(
                size_bytes=body.size,
                sha256=sha256 or (yield HashBody(body)),
                mime_type=headers["Content-Type"],
                filename=filename,
                namespace=namespace,
                meta=meta,
                source=source,
                ttl=ttl,
                scope=scope,
            )
            ref = yield from self._put_direct(body, ticket_of, scope)
            if ref is not None:
                return ref
        answer: Answer = yield Call("POST", "/v1/artifacts", headers=headers, body=body)
        return answer.parse(ArtifactRef.from_json, "ArtifactRef")

    def _put_direct(self, body: Body, ticket_of: Op[UploadTicket], scope: Scope) -> Op[ArtifactRef | None]:
        """begin → PUT to the blob store (in parts, when the ticket says so) → complete; None when the
        service offers no direct uploads."""
        try:
            ticket = yield from ticket_of
        except ArtifactStoreError as err:
            no_route = isinstance(err, NotFoundError) and "No route" in err.message
            if err.details.get("reason") != "direct_uploads_unavailable" and not no_route:
                raise
            self.direct_uploads_offered = False
            return None
        self.direct_uploads_offered = True
        if ticket.kind == "multipart":
            from ._uploads import BigUpload, put_parts

            return (yield from put_parts(body, ticket, [], scope, BigUpload(), None))
        try:
            yield Call(ticket.method, ticket.url, headers=dict(ticket.headers), body=body, external=True)
        except ArtifactStoreError as err:
            raise BackendUnavailableError(
                f"The blob store refused the direct upload: {err.message}", status=err.status
            ) from err
        return (yield from self.complete_upload(ticket.upload_id))

    def put_big(
        self,
        path: os.PathLike[str],
        *,
        mime_type: str | None,
        filename: str | None,
        namespace: str | None,
        meta: Mapping[str, Any] | None,
        source: Mapping[str, Any] | None,
        ttl: int | str | None,
        sha256: str | None,
        scope: Scope,
        big: Any,
    ) -> Op[ArtifactRef]:
        """A file that survives failures: straight to the bucket (one PUT, or in parts) where the
        service offers direct uploads, else over tus through the service; a resume record lets the
        same file put again continue. A small file is one put. See _uploads."""
        from ._uploads import put_parts, put_tus, recorded_parts

        body = FileBody(path)
        size = body.size or 0
        mime = mime_type or OCTET_STREAM
        headers = put_headers(
            mime_type=mime,
            filename=filename,
            namespace=namespace,
            meta=meta,
            source=source,
            ttl=ttl,
            sha256=sha256,
            scope=scope,
        )
        if size <= self.direct_upload_above_bytes:
            answer: Answer = yield Call("POST", "/v1/artifacts", headers=headers, body=body)
            ref = answer.parse(ArtifactRef.from_json, "ArtifactRef")
            if big.on_progress is not None:
                from ._uploads import UploadProgress

                big.on_progress(UploadProgress(ref.id, size, size))
            return ref
        digest: str = sha256 or (yield HashBody(body))
        parts_key = f"{self.base_url} {digest} {size}"
        tus_key = f"{self.base_url} tus {digest} {size}"
        if self.direct_uploads_offered is not False:
            resumed = yield from recorded_parts(big.records, parts_key, size, digest, scope)
            if resumed is not None:
                self.direct_uploads_offered = True
                ticket, held = resumed
                return (yield from put_parts(body, ticket, held, scope, big, parts_key))
        tus_recorded = big.records is not None and big.records.get(tus_key) is not None
        if self.direct_uploads_offered is not False and not tus_recorded:
            try:
                ticket = yield from self.begin_upload(
                    size_bytes=size,
                    sha256=digest,
                    mime_type=mime,
                    filename=filename,
                    namespace=namespace,
                    meta=meta,
                    source=source,
                    ttl=ttl,
                    scope=scope,
                )
            except ArtifactStoreError as err:
                no_route = isinstance(err, NotFoundError) and "No route" in err.message
                if err.details.get("reason") != "direct_uploads_unavailable" and not no_route:
                    raise
                self.direct_uploads_offered = False
            else:
                self.direct_uploads_offered = True
                if ticket.kind == "multipart":
                    if big.records is not None:
                        big.records.set(parts_key, ticket.upload_id)
                    return (yield from put_parts(body, ticket, [], scope, big, parts_key))
                return (yield from self._put_one(body, ticket, big))
        # tus has no field for `source`: with one, the file is streamed in one put instead.
        if source is None:
            ref = yield from put_tus(
                body,
                size=size,
                sha256=digest,
                mime_type=mime,
                filename=filename,
                namespace=namespace,
                meta=meta,
                ttl=ttl,
                scope=scope,
                big=big,
                key=tus_key,
                retries=self.retry.retries,
                wait=self.retry.wait_after,
            )
            if ref is not None:
                return ref
        headers["X-Artifact-Sha256"] = digest
        answer = yield Call("POST", "/v1/artifacts", headers=headers, body=body)
        return answer.parse(ArtifactRef.from_json, "ArtifactRef")

    def _put_one(self, body: Body, ticket: UploadTicket, big: Any) -> Op[ArtifactRef]:
        """A direct upload in one PUT: progress at its start and its end."""
        from ._uploads import UploadProgress, commit_timeout

        size = body.size or 0
        if big.on_progress is not None:
            big.on_progress(UploadProgress(ticket.upload_id, 0, size))
        try:
            yield Call(ticket.method, ticket.url, headers=dict(ticket.headers), body=body, external=True)
        except ArtifactStoreError as err:
            raise BackendUnavailableError(
                f"The blob store refused the direct upload: {err.message}", status=err.status
            ) from err
        if big.on_progress is not None:
            big.on_progress(UploadProgress(ticket.upload_id, size, size))
        path = f"/v1/uploads/{quote(ticket.upload_id, safe='')}/complete"
        answer: Answer = yield Call("POST", path, timeout=commit_timeout(size))
        return answer.parse(ArtifactRef.from_json, "ArtifactRef")

    def begin_upload(
        self,
        *,
        size_bytes: int,
        sha256: str,
        mime_type: str | None,
        filename: str | None,
        namespace: str | None,
        meta: Mapping[str, Any] | None,
        source: Mapping[str, Any] | None,
        ttl: int | str | None,
        scope: Scope,
    ) -> Op[UploadTicket]:
        declared = {
            "sizeBytes": size_bytes,
            "sha256": sha256,
            "mimeType": mime_type,
            "filename": filename,
            "namespace": namespace,
            "meta": meta,
            "source": source,
            "ttl": ttl,
        }
        answer: Answer = yield json_call("POST", "/v1/uploads", declared, scope_headers(scope))
        return answer.parse(UploadTicket.from_json, "UploadTicket")

    def complete_upload(self, upload_id: str) -> Op[ArtifactRef]:
        answer: Answer = yield Call("POST", f"/v1/uploads/{quote(upload_id, safe='')}/complete")
        return answer.parse(ArtifactRef.from_json, "ArtifactRef")

    # Reads

    def download_call(self, artifact_id: str, byte_range: ByteRange | None, scope: Scope) -> Call:
        headers = scope_headers(scope)
        if byte_range is not None:
            headers["Range"] = range_header(byte_range)
        return Call("GET", artifact_path(artifact_id), headers=headers)

    def get(self, artifact_id: str, byte_range: ByteRange | None, scope: Scope) -> Op[bytes | None]:
        try:
            answer: Answer = yield self.download_call(artifact_id, byte_range, scope)
        except NotFoundError:
            return None
        if byte_range is not None and answer.status == 200:
            # Something between us and the service ignored Range and sent the whole body.
            start, end = byte_range
            return answer.content[start : None if end is None else end + 1]
        return answer.content

    def meta(self, artifact_id: str, scope: Scope) -> Op[ArtifactRef | None]:
        try:
            answer: Answer = yield Call("GET", f"{artifact_path(artifact_id)}/meta", headers=scope_headers(scope))
        except NotFoundError:
            return None
        return answer.parse(ArtifactRef.from_json, "ArtifactRef")

    def exists(self, artifact_id: str, scope: Scope) -> Op[bool]:
        try:
            yield Call("HEAD", artifact_path(artifact_id), headers=scope_headers(scope))
        except NotFoundError:
            return False
        return True

    def delete(self, artifact_id: str, scope: Scope) -> Op[bool]:
        try:
            yield Call("DELETE", artifact_path(artifact_id), headers=scope_headers(scope))
        except NotFoundError:
            return False
        return True

    def url(
        self,
        artifact_id: str,
        *,
        mode: str | None,
        expires_in: int | None,
        disposition: str | None,
        scope: Scope,
    ) -> Op[DownloadLink]:
        asked = {"mode": mode, "expiresIn": expires_in, "disposition": disposition}
        answer: Answer = yield json_call("POST", f"{artifact_path(artifact_id)}/url", asked, scope_headers(scope))
        return answer.parse(DownloadLink.from_json, "DownloadUrl")

    def list_page(
        self,
        *,
        namespace: str | None,
        mime_prefix: str | None,
        created_after: datetime | str | None,
        created_before: datetime | str | None,
        q: str | None,
        sort: str | None,
        cursor: str | None,
        limit: int | None,
        scope: Scope,
    ) -> Op[Page]:
        named = {
            "session": scope.session,
            "trace": scope.trace,
            "user": scope.user,
            "namespace": namespace,
            "mimePrefix": mime_prefix,
            "createdAfter": None if created_after is None else query_time(created_after),
            "createdBefore": None if created_before is None else query_time(created_before),
            "q": q,
            "sort": sort,
            "cursor": cursor,
            "limit": None if limit is None else str(limit),
        }
        params = {name: value for name, value in named.items() if value is not None}
        answer: Answer = yield Call("GET", "/v1/artifacts", params=params)
        return answer.parse(Page.from_json, "ArtifactList")

    # Views: what a model reads of an artifact

    def view_call(self, artifact_id: str, view: str, named: Mapping[str, Any], scope: Scope) -> Call:
        """GET /v1/artifacts/{id}/{view} with the options given (None: the service's default)."""
        path = f"{artifact_path(artifact_id)}/{view}"
        return Call("GET", path, params=view_params(named), headers=scope_headers(scope))

    def read(
        self,
        artifact_id: str,
        *,
        offset: int | None,
        limit: int | None,
        column: int | None,
        page: int | None,
        entry: str | None,
        budget: int | None,
        scope: Scope,
    ) -> Op[ReadResult]:
        named = {
            "offset": offset,
            "limit": limit,
            "column": column,
            "page": page,
            "entry": entry,
            "budget": budget,
        }
        answer: Answer = yield self.view_call(artifact_id, "text", named, scope)
        return answer.parse(ReadResult.from_json, "ReadAnswer")

    def search(
        self,
        artifact_id: str,
        pattern: str,
        *,
        regex: bool,
        ignore_case: bool,
        context: int | None,
        max_matches: int | None,
        offset: int | None,
        page: int | None,
        entry: str | None,
        budget: int | None,
        scope: Scope,
    ) -> Op[SearchResult]:
        named = {
            "pattern": pattern,
            "regex": regex,
            "ignoreCase": ignore_case,
            "context": context,
            "maxMatches": max_matches,
            "offset": offset,
            "page": page,
            "entry": entry,
            "budget": budget,
        }
        answer: Answer = yield self.view_call(artifact_id, "search", named, scope)
        return answer.parse(SearchResult.from_json, "SearchAnswer")

    def query(
        self, artifact_id: str, path: str, *, entry: str | None, budget: int | None, scope: Scope
    ) -> Op[QueryResult]:
        named = {"path": path, "entry": entry, "budget": budget}
        answer: Answer = yield self.view_call(artifact_id, "query", named, scope)
        return answer.parse(QueryResult.from_json, "QueryAnswer")

    # Named versions

    def save_version(
        self,
        app: str,
        name: str,
        data: PutData,
        *,
        mime_type: str | None,
        filename: str | None,
        meta: Mapping[str, Any] | None,
        source: Mapping[str, Any] | None,
        ttl: int | str | None,
        sha256: str | None,
        where: NameWhere,
    ) -> Op[ArtifactRef]:
        body = body_of(data)
        # The put's headers, but not its namespace (the app is) nor its scope (the query says it).
        headers = put_headers(
            mime_type=mime_type or body.default_mime or OCTET_STREAM,
            filename=filename,
            namespace=None,
            meta=meta,
            source=source,
            ttl=ttl,
            sha256=sha256,
            scope=Scope(),
        )
        call = Call("POST", names_path(app), params=where.params(name), headers=headers, body=body, once=True)
        answer: Answer = yield call
        return answer.parse(ArtifactRef.from_json, "ArtifactRef")

    def require_version_ref(self, app: str, name: str, version: int | None, where: NameWhere) -> Op[ArtifactRef]:
        """The version's ref (the latest live one's by default); NotFoundError when there is none."""
        answer: Answer = yield Call("GET", names_path(app, "/meta"), params=where.params(name, version))
        return answer.parse(ArtifactRef.from_json, "ArtifactRef")

    def version_ref(self, app: str, name: str, version: int | None, where: NameWhere) -> Op[ArtifactRef | None]:
        try:
            return (yield from self.require_version_ref(app, name, version, where))
        except NotFoundError:
            return None

    def version_content_call(
        self, app: str, name: str, ref: ArtifactRef, version: int | None, byte_range: ByteRange | None, where: NameWhere
    ) -> Call:
        """The bytes of the version `ref` is: by its number, so a save in between changes nothing."""
        number = ref.version if ref.version is not None else version
        headers = {"Range": range_header(byte_range)} if byte_range is not None else {}
        return Call("GET", names_path(app, "/content"), params=where.params(name, number), headers=headers)

    def load_version(self, app: str, name: str, version: int | None, where: NameWhere) -> Op[LoadedVersion | None]:
        ref = yield from self.version_ref(app, name, version, where)
        if ref is None:
            return None
        try:
            answer: Answer = yield self.version_content_call(app, name, ref, version, None, where)
        except NotFoundError:
            # Deleted (or expired) between the two calls.
            return None
        return LoadedVersion(ref, answer.content)

    def list_versions(self, app: str, name: str, where: NameWhere) -> Op[list[ArtifactRef]]:
        try:
            answer: Answer = yield Call("GET", names_path(app, "/versions"), params=where.params(name))
        except NotFoundError:
            return []
        return answer.parse(versions_from_json, "VersionList")

    def list_names(self, app: str, *, cursor: str | None, limit: int | None, where: NameWhere) -> Op[NamePage]:
        params = where.params()
        if cursor is not None:
            params["cursor"] = cursor
        if limit is not None:
            params["limit"] = str(limit)
        answer: Answer = yield Call("GET", names_path(app), params=params)
        return answer.parse(NamePage.from_json, "NameList")

    def delete_name(self, app: str, name: str, where: NameWhere) -> Op[bool]:
        try:
            yield Call("DELETE", names_path(app), params=where.params(name))
        except NotFoundError:
            return False
        return True

    def version_url(
        self,
        app: str,
        name: str,
        version: int | None,
        *,
        mode: str | None,
        expires_in: int | None,
        disposition: str | None,
        where: NameWhere,
    ) -> Op[DownloadLink]:
        asked = {"mode": mode, "expiresIn": expires_in, "disposition": disposition}
        call = json_call("POST", names_path(app, "/url"), asked)
        call.params = where.params(name, version)
        answer: Answer = yield call
        return answer.parse(DownloadLink.from_json, "DownloadUrl")

    # Sessions

    def end_session(self, session_id: str | None) -> Op[SessionEnd]:
        session = session_id if session_id is not None else self.scope.session
        if session is None:
            raise BadRequestError(
                "Name the session to end: end_session(session_id). Only a client with a session of its own "
                "(scope or ARTIFACT_STORE_SESSION) ends that one by default."
            )
        # Idempotent, with no body: retried like a delete.
        answer: Answer = yield Call("DELETE", session_path(session))
        return answer.parse(SessionEnd.from_json, "SessionEnd")

    # Usage

    def usage(self, params: Mapping[str, Any]) -> Op[dict[str, Any]]:
        query = {name: str(value) for name, value in params.items() if value is not None}
        answer: Answer = yield Call("GET", "/v1/usage", params=query)
        return answer.parse(_json_object, "UsageReport")


def _json_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("the answer: expected an object")
    return value


# Failures after which no answer came back: the request may be sent again.
CONNECTION_ERRORS = (httpx.NetworkError, httpx.TimeoutException, httpx.RemoteProtocolError)


def unreachable(target: str, attempts: int, err: Exception) -> BackendUnavailableError:
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    if isinstance(err, httpx.WriteError):
        # The service closes the connection when it refuses a put before reading all of it; an httpx
        # whose httpcore predates 0.17.3 cannot read the refusal it sent first.
        return BackendUnavailableError(
            f"The connection to {target} closed before the whole body was sent{tries} "
            f"({type(err).__name__}: {err}): the service may have refused the put "
            "(too large, over a quota, not allowed), or the connection broke."
        )
    return BackendUnavailableError(
        f"Could not reach {target}{tries} ({type(err).__name__}: {err}). "
        "Check the URL and that the service is running, then retry."
    )


def bearer(token: object) -> dict[str, str]:
    if token is None or token == "":
        return {}
    if not isinstance(token, str):
        raise TypeError(f"The token must be a string, not {type(token).__name__}.")
    return {"Authorization": f"Bearer {token}"}


def file_put_names(path: os.PathLike[str] | str, filename: str | None, mime_type: str | None) -> tuple[str, str | None]:
    """A file's put is named after the file, and typed by its extension, unless told otherwise."""
    name = os.path.basename(os.fspath(path))
    return (filename if filename is not None else name), (mime_type or mimetypes.guess_type(name)[0])
