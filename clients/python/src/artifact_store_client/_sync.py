"""ArtifactStoreClient: the client over httpx.Client."""

from __future__ import annotations

import builtins
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx

from ._bodies import PutData
from ._core import (
    CONNECTION_ERRORS,
    DEFAULT_TIMEOUT,
    DIRECT_UPLOAD_ABOVE_BYTES,
    Answer,
    Call,
    ClientCore,
    HashBody,
    Op,
    ReadSlice,
    Sleep,
    Step,
    Together,
    bearer,
    file_put_names,
    unreachable,
)
from ._events import RECONNECT_ERRORS, EventFeed
from ._ranges import ByteRange, cut_range
from ._retry import RetryPolicy, retry_after_seconds
from ._uploads import PART_CONCURRENCY, TUS_CHUNK_BYTES, BigUpload, ResumeRecords, UploadProgress, records_of
from .errors import ArtifactStoreError, error_for
from .models import (
    ArtifactEvent,
    ArtifactRef,
    DownloadLink,
    LoadedVersion,
    NameInfo,
    NamePage,
    Page,
    QueryResult,
    ReadResult,
    Scope,
    SearchResult,
    SessionEnd,
    StreamedVersion,
    UploadTicket,
)

T = TypeVar("T")


class ArtifactStoreClient:
    """The artifact store over HTTP.

    `base_url`, `token` and the default session come from ARTIFACT_STORE_URL, ARTIFACT_STORE_TOKEN
    and ARTIFACT_STORE_SESSION when not given. `token` may be a callable, asked before every request
    so it can refresh. `scope` names the session, trace and user that a tenant-wide token puts into,
    lists and reads. Requests whose body can be sent again are retried after 429, 503 and connection
    errors, honouring Retry-After; a put from an iterator is sent once.
    """

    def __init__(
        self,
        base_url: str | None = None,
        token: str | Callable[[], str] | None = None,
        *,
        scope: Scope | Mapping[str, str] | None = None,
        retries: int = 3,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        direct_upload_above_bytes: float = DIRECT_UPLOAD_ABOVE_BYTES,
        retry_base_delay: float = 0.25,
        retry_max_delay: float = 10.0,
    ) -> None:
        retry = RetryPolicy(max(0, retries), retry_base_delay, retry_max_delay)
        self._core = ClientCore(base_url, token, scope, retry, direct_upload_above_bytes)
        self._headers = dict(headers or {})
        self._http = httpx.Client(base_url=self._core.base_url, timeout=timeout, transport=transport)

    @property
    def base_url(self) -> str:
        return self._core.base_url

    @property
    def scope(self) -> Scope:
        return self._core.scope

    @property
    def direct_uploads_offered(self) -> bool | None:
        """None until a put tried a direct upload; then whether the service offers them."""
        return self._core.direct_uploads_offered

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ArtifactStoreClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # Puts

    def put(
        self,
        data: PutData,
        *,
        mime_type: str | None = None,
        filename: str | None = None,
        namespace: str | None = None,
        meta: Mapping[str, Any] | None = None,
        source: Mapping[str, Any] | None = None,
        ttl: int | str | None = None,
        sha256: str | None = None,
        session: str | None = None,
        trace: str | None = None,
        user: str | None = None,
    ) -> ArtifactRef:
        """Stores bytes, text (UTF-8, text/plain by default), a file (a path or a binary file object)
        or an iterator of bytes, and returns its reference. `ttl` is in seconds, or "never".

        A body of known size above `direct_upload_above_bytes` goes straight to the blob store when
        the service offers direct uploads.
        """
        scope = self._core.scope_for(session, trace, user)
        return self._run(
            self._core.put(
                data,
                mime_type=mime_type,
                filename=filename,
                namespace=namespace,
                meta=meta,
                source=source,
                ttl=ttl,
                sha256=sha256,
                scope=scope,
            )
        )

    def put_file(
        self,
        path: str | os.PathLike[str],
        *,
        mime_type: str | None = None,
        filename: str | None = None,
        namespace: str | None = None,
        meta: Mapping[str, Any] | None = None,
        source: Mapping[str, Any] | None = None,
        ttl: int | str | None = None,
        sha256: str | None = None,
        session: str | None = None,
        trace: str | None = None,
        user: str | None = None,
        resume: bool | ResumeRecords = False,
        on_progress: Callable[[UploadProgress], None] | None = None,
        part_concurrency: int = PART_CONCURRENCY,
        tus_chunk_bytes: int = TUS_CHUNK_BYTES,
    ) -> ArtifactRef:
        """Stores a file, named after it and typed by its extension unless told otherwise.

        A file above `direct_upload_above_bytes` is hashed (read in a stream), then goes straight
        to the bucket where the service offers direct uploads (in parts above the service's
        threshold, `part_concurrency` at a time, each retried on its own), else through the service
        over tus in chunks of `tus_chunk_bytes`, resumed after a dropped connection. Only a part or
        a chunk is held in memory. `resume=True` keeps a record in FileResumeRecords' file (or pass
        resume records) so that putting the same file again, here or from a new process, continues
        an interrupted upload. `on_progress` hears of the bytes acknowledged so far (an
        UploadProgress), from the threads that send the parts.
        """
        filename, mime_type = file_put_names(path, filename, mime_type)
        big = BigUpload(records_of(resume), on_progress, part_concurrency, tus_chunk_bytes)
        return self._run(
            self._core.put_big(
                Path(path),
                mime_type=mime_type,
                filename=filename,
                namespace=namespace,
                meta=meta,
                source=source,
                ttl=ttl,
                sha256=sha256,
                scope=self._core.scope_for(session, trace, user),
                big=big,
            )
        )

    def begin_upload(
        self,
        *,
        size_bytes: int,
        sha256: str,
        mime_type: str | None = None,
        filename: str | None = None,
        namespace: str | None = None,
        meta: Mapping[str, Any] | None = None,
        source: Mapping[str, Any] | None = None,
        ttl: int | str | None = None,
        session: str | None = None,
        trace: str | None = None,
        user: str | None = None,
    ) -> UploadTicket:
        """Asks for a direct upload: PUT the bytes to the ticket's url with its headers, then complete it."""
        return self._run(
            self._core.begin_upload(
                size_bytes=size_bytes,
                sha256=sha256,
                mime_type=mime_type,
                filename=filename,
                namespace=namespace,
                meta=meta,
                source=source,
                ttl=ttl,
                scope=self._core.scope_for(session, trace, user),
            )
        )

    def complete_upload(self, upload_id: str) -> ArtifactRef:
        return self._run(self._core.complete_upload(upload_id))

    # Reads

    def get(
        self,
        artifact_id: str,
        *,
        range: ByteRange | None = None,
        session: str | None = None,
        trace: str | None = None,
        user: str | None = None,
    ) -> bytes | None:
        """The bytes, held in memory (`stream` does not), or None when missing or out of scope.

        `range` is (start, end), both inclusive as in HTTP, or (start, None) for the rest.
        """
        return self._run(self._core.get(artifact_id, range, self._core.scope_for(session, trace, user)))

    @contextmanager
    def stream(
        self,
        artifact_id: str,
        *,
        range: ByteRange | None = None,
        session: str | None = None,
        trace: str | None = None,
        user: str | None = None,
    ) -> Iterator[Iterator[bytes]]:
        """The bytes as they arrive: `with client.stream(id) as chunks: for chunk in chunks: ...`.

        Raises NotFoundError when the artifact is missing or out of scope.
        """
        call = self._core.download_call(artifact_id, range, self._core.scope_for(session, trace, user))
        response = self._open(call)
        try:
            chunks = response.iter_bytes()
            yield cut_range(chunks, range) if range is not None and response.status_code == 200 else chunks
        finally:
            response.close()

    def meta(
        self, artifact_id: str, *, session: str | None = None, trace: str | None = None, user: str | None = None
    ) -> ArtifactRef | None:
        """The reference, or None when missing or out of scope."""
        return self._run(self._core.meta(artifact_id, self._core.scope_for(session, trace, user)))

    def exists(
        self, artifact_id: str, *, session: str | None = None, trace: str | None = None, user: str | None = None
    ) -> bool:
        """Whether the artifact is there for this scope (a HEAD: no bytes move)."""
        return self._run(self._core.exists(artifact_id, self._core.scope_for(session, trace, user)))

    def delete(
        self, artifact_id: str, *, session: str | None = None, trace: str | None = None, user: str | None = None
    ) -> bool:
        """Removes the caller's references; False when there was none to remove."""
        return self._run(self._core.delete(artifact_id, self._core.scope_for(session, trace, user)))

    def url(
        self,
        artifact_id: str,
        *,
        mode: str | None = None,
        expires_in: int | None = None,
        disposition: str | None = None,
        session: str | None = None,
        trace: str | None = None,
        user: str | None = None,
    ) -> DownloadLink:
        """A link that serves the bytes without a token (for a browser), until it expires."""
        scope = self._core.scope_for(session, trace, user)
        return self._run(
            self._core.url(artifact_id, mode=mode, expires_in=expires_in, disposition=disposition, scope=scope)
        )

    def events(
        self, *, last_event_id: str | None = None, session: str | None = None, trace: str | None = None
    ) -> Iterator[ArtifactEvent]:
        """Changes to references as they happen, without end; reconnects where it left off.

        `last_event_id` (an event's id) resumes right after that event.
        """
        feed = EventFeed(last_event_id, self._core.scope_for(session, trace, None))
        policy = self._core.retry
        attempt = 0
        while True:
            try:
                response = self._open(feed.connect(), retry=False)
            except RECONNECT_ERRORS as err:
                time.sleep(policy.wait_after(err.retry_after, attempt))
                attempt += 1
                continue
            try:
                for chunk in response.iter_bytes():
                    attempt = 0
                    yield from feed.feed(chunk)
            except CONNECTION_ERRORS:
                pass
            finally:
                response.close()
            time.sleep(policy.backoff(attempt))
            attempt += 1

    def end_session(self, session_id: str | None = None) -> SessionEnd:
        """Ends a session (default: the client's scope's): everything of it the token sees goes at
        once, its references and its named versions with their names (user-wide names stay), and the
        answer says what went. A session that holds nothing answers zeros, so it is retried like a
        delete. A session-bound token ends only its own session (ForbiddenError), a trace-bound one
        none.
        """
        return self._run(self._core.end_session(session_id))

    def usage(self, **params: Any) -> dict[str, Any]:
        """Live bytes and counts against the limits (GET /v1/usage; `top`, `tenant`)."""
        return self._run(self._core.usage(params))

    def iter_list(self, **filters: Any) -> Iterator[ArtifactRef]:
        """Every reference `list` would give, page after page."""
        cursor = filters.pop("cursor", None)
        while True:
            page = self.list(cursor=cursor, **filters)
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def list(
        self,
        *,
        namespace: str | None = None,
        mime_prefix: str | None = None,
        created_after: datetime | str | None = None,
        created_before: datetime | str | None = None,
        q: str | None = None,
        sort: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        session: str | None = None,
        trace: str | None = None,
        user: str | None = None,
    ) -> Page:
        """One page of references: `q` searches id, filename and name; `sort` is newest (default),
        oldest, largest, smallest or name; a cursor goes on with the same filters and sort."""
        return self._run(
            self._core.list_page(
                namespace=namespace,
                mime_prefix=mime_prefix,
                created_after=created_after,
                created_before=created_before,
                q=q,
                sort=sort,
                cursor=cursor,
                limit=limit,
                scope=self._core.scope_for(session, trace, user),
            )
        )

    # Views: what a model reads

    def read(
        self,
        artifact_id: str,
        *,
        offset: int | None = None,
        limit: int | None = None,
        column: int | None = None,
        page: int | None = None,
        entry: str | None = None,
        budget: int | None = None,
        session: str | None = None,
        trace: str | None = None,
        user: str | None = None,
    ) -> ReadResult:
        """Lines of the artifact's text from line `offset` (1-based; default 1), as many as `limit`
        and `budget` (characters of `text`) allow. `.text` is what a model reads; `.lines` the lines.

        Go on with `offset=result.next_offset, column=result.next_column` until `next_offset` is
        None. `page` reads one page of a PDF, `entry` one entry of a ZIP (without it, the listing).
        Raises NotFoundError (missing or out of scope), UnsupportedTypeError (no text view: a
        binary file), UnprocessableError (malformed, or over a limit) and BadRequestError (an
        offset past the end, a page that does not exist).
        """
        return self._run(
            self._core.read(
                artifact_id,
                offset=offset,
                limit=limit,
                column=column,
                page=page,
                entry=entry,
                budget=budget,
                scope=self._core.scope_for(session, trace, user),
            )
        )

    def search(
        self,
        artifact_id: str,
        pattern: str,
        *,
        regex: bool = False,
        ignore_case: bool = False,
        context: int | None = None,
        max_matches: int | None = None,
        offset: int | None = None,
        page: int | None = None,
        entry: str | None = None,
        budget: int | None = None,
        session: str | None = None,
        trace: str | None = None,
        user: str | None = None,
    ) -> SearchResult:
        """The lines that contain `pattern` (a regular expression when `regex`, in JavaScript syntax
        without backreferences, lookahead, or lookbehind with a capture group), with `context`
        lines around each, at most `max_matches` of them. The rest: search again with
        `offset=result.next_offset` (and `page=result.next_page` for a PDF). A pattern the service
        cannot run is a BadRequestError.
        """
        return self._run(
            self._core.search(
                artifact_id,
                pattern,
                regex=regex,
                ignore_case=ignore_case,
                context=context,
                max_matches=max_matches,
                offset=offset,
                page=page,
                entry=entry,
                budget=budget,
                scope=self._core.scope_for(session, trace, user),
            )
        )

    def query(
        self,
        artifact_id: str,
        path: str,
        *,
        entry: str | None = None,
        budget: int | None = None,
        session: str | None = None,
        trace: str | None = None,
        user: str | None = None,
    ) -> QueryResult:
        """The values an RFC 9535 JSONPath (`$.issues[?@.number == 42].title`) selects in a JSON
        artifact, or in its ZIP `entry`. An invalid path is a BadRequestError.
        """
        return self._run(
            self._core.query(
                artifact_id, path, entry=entry, budget=budget, scope=self._core.scope_for(session, trace, user)
            )
        )

    # Named versions

    def save_version(
        self,
        app: str,
        name: str,
        data: PutData,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        user_wide: bool = False,
        mime_type: str | None = None,
        filename: str | None = None,
        meta: Mapping[str, Any] | None = None,
        source: Mapping[str, Any] | None = None,
        ttl: int | str | None = None,
        sha256: str | None = None,
    ) -> ArtifactRef:
        """Saves `data` (what `put` takes) as the name's next version: 0, 1, 2… Its ref carries
        `name` and `version`, and its own type, filename and meta.

        The name lives in `app` (its versions' namespace), the user (`user_id`, else the client's
        scope's, else the token's) and the session (`session_id`, else the client's, else the
        token's); `user_wide=True` means the user's name across all their sessions. Named versions
        do not expire unless `ttl` (or the tenant's policy) says so.
        """
        return self._run(
            self._core.save_version(
                app,
                name,
                data,
                mime_type=mime_type,
                filename=filename,
                meta=meta,
                source=source,
                ttl=ttl,
                sha256=sha256,
                where=self._core.name_where(user_id, session_id, user_wide),
            )
        )

    def load_version(
        self,
        app: str,
        name: str,
        version: int | None = None,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        user_wide: bool = False,
    ) -> LoadedVersion | None:
        """Version `version` (default: the latest live one) as `LoadedVersion(ref, data)`, held in
        memory (`stream_version` does not), or None when there is none in this scope."""
        where = self._core.name_where(user_id, session_id, user_wide)
        return self._run(self._core.load_version(app, name, version, where))

    @contextmanager
    def stream_version(
        self,
        app: str,
        name: str,
        version: int | None = None,
        *,
        range: ByteRange | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        user_wide: bool = False,
    ) -> Iterator[StreamedVersion[Iterator[bytes]]]:
        """A version as it arrives: `with client.stream_version(app, name) as v: for chunk in v.chunks: ...`.

        `v.ref` is the version's ref; `range` is as `stream`'s. Raises NotFoundError when there is none.
        """
        where = self._core.name_where(user_id, session_id, user_wide)
        ref = self._run(self._core.require_version_ref(app, name, version, where))
        response = self._open(self._core.version_content_call(app, name, ref, version, range, where))
        try:
            chunks = response.iter_bytes()
            cut = cut_range(chunks, range) if range is not None and response.status_code == 200 else chunks
            yield StreamedVersion(ref, cut)
        finally:
            response.close()

    def version_ref(
        self,
        app: str,
        name: str,
        version: int | None = None,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        user_wide: bool = False,
    ) -> ArtifactRef | None:
        """A version's ref (default: the latest live one's), or None when there is none."""
        where = self._core.name_where(user_id, session_id, user_wide)
        return self._run(self._core.version_ref(app, name, version, where))

    def list_versions(
        self,
        app: str,
        name: str,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        user_wide: bool = False,
    ) -> builtins.list[ArtifactRef]:
        """The name's live versions' refs, oldest first; [] when there is none."""
        where = self._core.name_where(user_id, session_id, user_wide)
        return self._run(self._core.list_versions(app, name, where))

    def list_names(
        self,
        app: str,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        user_wide: bool = False,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> NamePage:
        """One page of the app's names with a live version in this scope, by name."""
        where = self._core.name_where(user_id, session_id, user_wide)
        return self._run(self._core.list_names(app, cursor=cursor, limit=limit, where=where))

    def iter_names(
        self,
        app: str,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        user_wide: bool = False,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> Iterator[NameInfo]:
        """Every name `list_names` would give, page after page (`limit` names a page)."""
        while True:
            page = self.list_names(
                app, user_id=user_id, session_id=session_id, user_wide=user_wide, cursor=cursor, limit=limit
            )
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def delete_name(
        self,
        app: str,
        name: str,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        user_wide: bool = False,
    ) -> bool:
        """Removes the name and every version; False when there was none. A later save starts at 0."""
        where = self._core.name_where(user_id, session_id, user_wide)
        return self._run(self._core.delete_name(app, name, where))

    def version_url(
        self,
        app: str,
        name: str,
        version: int | None = None,
        *,
        mode: str | None = None,
        expires_in: int | None = None,
        disposition: str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        user_wide: bool = False,
    ) -> DownloadLink:
        """A link to a version's bytes (default: the latest live one's) that needs no token, as `url`'s."""
        where = self._core.name_where(user_id, session_id, user_wide)
        return self._run(
            self._core.version_url(
                app, name, version, mode=mode, expires_in=expires_in, disposition=disposition, where=where
            )
        )

    # I/O

    def _run(self, op: Op[T]) -> T:
        try:
            step = next(op)
            while True:
                try:
                    result = self._perform(step)
                except ArtifactStoreError as err:
                    step = op.throw(err)
                else:
                    step = op.send(result)
        except StopIteration as done:
            value: T = done.value
            return value
        finally:
            op.close()

    def _perform(self, step: Step) -> Any:
        if isinstance(step, HashBody):
            return step.body.sha256()
        if isinstance(step, ReadSlice):
            return step.body.read_slice(step.start, step.size)
        if isinstance(step, Sleep):
            time.sleep(step.seconds)
            return None
        if isinstance(step, Together):
            return self._together(step)
        response = self._open(step)
        try:
            return Answer(step, response.status_code, response.headers, response.read())
        finally:
            response.close()

    def _together(self, step: Together) -> builtins.list[Any]:
        """Runs the operations on up to `step.limit` threads (httpx.Client is shared between them)."""
        waiting = deque(enumerate(step.ops))
        results: builtins.list[Any] = [None] * len(step.ops)
        failures: builtins.list[BaseException] = []
        lock = threading.Lock()

        def work() -> None:
            while True:
                with lock:
                    if failures or not waiting:
                        return
                    index, op = waiting.popleft()
                try:
                    results[index] = self._run(op)
                except BaseException as err:  # noqa: BLE001 - raised again by the caller's thread
                    with lock:
                        failures.append(err)
                    return

        try:
            if step.limit <= 1 or len(waiting) <= 1:
                work()
            else:
                threads = [threading.Thread(target=work, daemon=True) for _ in range(min(step.limit, len(waiting)))]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
        except BaseException as err:
            # Interrupted (Ctrl-C): no new operation starts; those running end on their own.
            with lock:
                failures.append(err)
            raise
        finally:
            with lock:
                for _, op in waiting:
                    op.close()
                waiting.clear()
        if failures:
            raise failures[0]
        return results

    def _open(self, call: Call, *, retry: bool = True) -> httpx.Response:
        """A successful answer with its body unread; a failed one raises its ArtifactStoreError."""
        policy = self._core.retry
        attempts = policy.retries + 1 if retry and call.replayable else 1
        for attempt in range(attempts):
            last = attempt + 1 == attempts
            content = call.body.content() if call.body is not None else nullcontext(None)
            with content as body:
                request = self._http.build_request(
                    call.method,
                    call.url,
                    params=call.params or None,
                    headers=self._headers_for(call),
                    content=body,
                    **({"timeout": call.timeout} if call.timeout is not None else {}),
                )
                try:
                    response = self._http.send(request, stream=True)
                except CONNECTION_ERRORS as err:
                    if last or call.once:
                        raise unreachable(call.target(self.base_url), attempt + 1, err) from err
                    time.sleep(policy.backoff(attempt))
                    continue
            if response.is_success:
                return response
            if call.retryable(response.status_code) and not last:
                response.close()
                retry_after = retry_after_seconds(response.headers.get("retry-after"))
                time.sleep(policy.wait_after(retry_after, attempt))
                continue
            try:
                raise error_for(response.status_code, response.read(), response.headers, request=call.describe())
            finally:
                response.close()
        raise AssertionError("unreachable")

    def _headers_for(self, call: Call) -> dict[str, str]:
        if call.external:
            return call.request_headers()
        token = self._core.token() if callable(self._core.token) else self._core.token
        return {**self._headers, **bearer(token), **call.request_headers()}
