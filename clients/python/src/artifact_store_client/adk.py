"""Google ADK for Python's artifact service over artifact-store's named versions.

`ArtifactStoreArtifactService` is a `BaseArtifactService` (google-adk 2.11.0, the release of
2026-10-01: `google/adk/artifacts/base_artifact_service.py`) whose artifacts live in the service. An
ADK filename is a name, its versions are the name's versions (0, 1, 2…, numbered by the service in
the save's own transaction, so parallel saves never share a number), and a `user:` filename is
user-wide, shared by every session of the user. Pass it to the Runner as `artifact_service`.

The stored form is the one the TypeScript adapter (`artifact-store-sdk/adk`) writes, so a version
saved by either loads in the other:

- `inline_data`: the bytes, under the part's mime type (`application/octet-stream` when it has none
  or one the service refuses);
- `text`: UTF-8, `text/plain; charset=utf-8`;
- `file_data`: a `text/uri-list` of the one URI (the file itself is not fetched);
- the version's `source` is `{"adk": {"part", "mimeType", "displayName"}}` (what the part was), and
  its `meta` is the ADK `custom_metadata`, nothing else.

`google-adk` and `google-genai` are optional. With them installed the service subclasses ADK's
`BaseArtifactService` and answers with `google.genai.types.Part` and ADK's `ArtifactVersion`;
without them it answers with this module's `Part`, `Blob`, `FileData` and `ArtifactVersion`, which
have the same fields. See docs/adk-python.md.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, Union
from urllib.parse import quote

from ._async import AsyncArtifactStoreClient
from ._sync import ArtifactStoreClient
from .models import ArtifactRef, DownloadLink

__all__ = [
    "ADK_AVAILABLE",
    "GENAI_AVAILABLE",
    "ArtifactStoreArtifactService",
    "ArtifactVersion",
    "Blob",
    "FileData",
    "InputValidationError",
    "Part",
    "URI_LIST_MIME",
]

#: The stored type of a `file_data` reference: RFC 2483's list of URIs, here exactly one.
URI_LIST_MIME = "text/uri-list"
TEXT_MIME = "text/plain; charset=utf-8"
OCTET_STREAM = "application/octet-stream"
USER_PREFIX = "user:"
LIST_PAGE = 1000

_NAMESPACE = re.compile(r"[A-Za-z0-9._-]{1,128}")
# The mime types the service takes as they are (src/core/put-options.ts).
_MIME = re.compile(r"[a-z0-9!#$&^_.+-]{1,127}/[a-z0-9!#$&^_.+-]{1,127}(\s*;[\x20-\x7e]*)?", re.IGNORECASE)
_PART_KINDS = ("inlineData", "text", "fileData")


@dataclass
class Blob:
    """`google.genai.types.Blob`'s fields, where google-genai is not installed."""

    data: Optional[bytes] = None
    mime_type: Optional[str] = None
    display_name: Optional[str] = None


@dataclass
class FileData:
    """`google.genai.types.FileData`'s fields, where google-genai is not installed."""

    file_uri: Optional[str] = None
    mime_type: Optional[str] = None
    display_name: Optional[str] = None


@dataclass
class Part:
    """The fields of `google.genai.types.Part` that an artifact uses, where google-genai is not installed."""

    text: Optional[str] = None
    inline_data: Optional[Blob] = None
    file_data: Optional[FileData] = None

    @classmethod
    def from_text(cls, *, text: str) -> Part:
        return cls(text=text)

    @classmethod
    def from_bytes(cls, *, data: bytes, mime_type: str) -> Part:
        return cls(inline_data=Blob(data=data, mime_type=mime_type))

    @classmethod
    def from_uri(cls, *, file_uri: str, mime_type: Optional[str] = None) -> Part:
        return cls(file_data=FileData(file_uri=file_uri, mime_type=mime_type))


@dataclass
class ArtifactVersion:
    """ADK's `ArtifactVersion` fields, where google-adk is not installed."""

    version: int
    canonical_uri: str
    custom_metadata: dict[str, Any] = field(default_factory=dict)
    create_time: float = field(default_factory=time.time)
    mime_type: Optional[str] = None


class InputValidationError(ValueError):
    """ADK's InputValidationError (a ValueError), where google-adk is not installed."""


_Base: Any = object
try:  # pragma: no cover - depends on what is installed
    from google.genai import types as _genai_types

    Part = _genai_types.Part  # type: ignore[misc,assignment]  # noqa: F811
    Blob = _genai_types.Blob  # type: ignore[misc,assignment]  # noqa: F811
    FileData = _genai_types.FileData  # type: ignore[misc,assignment]  # noqa: F811
    GENAI_AVAILABLE = True
except ImportError:
    GENAI_AVAILABLE = False

try:  # pragma: no cover - depends on what is installed
    from google.adk.artifacts.base_artifact_service import ArtifactVersion as _AdkArtifactVersion
    from google.adk.artifacts.base_artifact_service import BaseArtifactService as _Base  # noqa: F811

    ArtifactVersion = _AdkArtifactVersion  # type: ignore[misc,assignment]  # noqa: F811
    ADK_AVAILABLE = True
    try:
        from google.adk.errors.input_validation_error import (  # type: ignore[assignment]  # noqa: F811
            InputValidationError,
        )
    except ImportError:
        pass
except ImportError:
    ADK_AVAILABLE = False

StoreClient = Union[AsyncArtifactStoreClient, ArtifactStoreClient]


class ArtifactStoreArtifactService(_Base):  # type: ignore[misc,valid-type]
    """ADK's artifact service backed by the service's named versions.

    `client` is an `AsyncArtifactStoreClient` (its calls are awaited) or an `ArtifactStoreClient`
    (its calls run in worker threads, as ADK's own GCS and file services run theirs); without one,
    an `AsyncArtifactStoreClient` is made from `base_url` and `token` (default: ARTIFACT_STORE_URL and
    ARTIFACT_STORE_TOKEN). Every call names its user and session, so the token must let it: a
    tenant-wide token (no `sub`, no session) serves every user; a token bound to a user serves that
    user only. `ttl` is how long each saved version lives (seconds, or "never"); by default the
    service keeps named versions until they are deleted, unless the tenant's policy says otherwise.

    Example::

        artifact_service = ArtifactStoreArtifactService(base_url="http://127.0.0.1:8787", token=token)
        runner = Runner(app_name="travel_agent", agent=agent, session_service=sessions,
                        artifact_service=artifact_service)
    """

    def __init__(
        self,
        client: StoreClient | None = None,
        *,
        base_url: str | None = None,
        token: Any = None,
        ttl: int | str | None = None,
    ) -> None:
        if client is not None and (base_url is not None or token is not None):
            raise ValueError("Pass either a client or base_url/token, not both.")
        self._owns_client = client is None
        self.client: StoreClient = client if client is not None else AsyncArtifactStoreClient(base_url, token)
        self._is_async = isinstance(self.client, AsyncArtifactStoreClient)
        self.ttl = ttl

    async def aclose(self) -> None:
        """Closes the client this service made (not one it was given)."""
        if self._owns_client:
            await self._call("aclose" if self._is_async else "close")

    async def __aenter__(self) -> ArtifactStoreArtifactService:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ADK's BaseArtifactService

    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: Any,
        session_id: Optional[str] = None,
        custom_metadata: Optional[dict[str, Any]] = None,
    ) -> int:
        """Saves a new version of the filename; returns its number (0 for the first, then 1, 2…).

        `artifact` is a Part, or a dict of one (camelCase or snake_case keys), with `inline_data`,
        `text` or `file_data`.
        """
        where = _where(app_name, user_id, filename, session_id)
        data, options = _to_stored(artifact, filename)
        if custom_metadata is not None:
            options["meta"] = custom_metadata
        if self.ttl is not None:
            options["ttl"] = self.ttl
        ref: ArtifactRef = await self._call("save_version", app_name, filename, data, **where, **options)
        if ref.version is None:
            raise RuntimeError(f"The service saved {filename!r} without a version number.")
        return ref.version

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: Optional[str] = None,
        version: Optional[int] = None,
    ) -> Any:
        """The version asked for (the latest without one) as the Part that was saved; None when there is none."""
        where = _where(app_name, user_id, filename, session_id)
        if not _is_version(version):
            return None
        loaded = await self._call("load_version", app_name, filename, version, **where)
        return _to_part(loaded.ref, loaded.data) if loaded is not None else None

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: Optional[str] = None
    ) -> list[str]:
        """The session's filenames and the user's `user:` filenames, sorted; only `user:` ones without a session."""
        _check_app(app_name)
        _check_user(user_id)
        session = _session(session_id)
        user_wide = await self._all_names(app_name, user_id=user_id, user_wide=True)
        keys = {name for name in user_wide if name.startswith(USER_PREFIX)}
        if session:
            in_session = await self._all_names(app_name, user_id=user_id, session_id=session)
            keys.update(name for name in in_session if not name.startswith(USER_PREFIX))
        return sorted(keys)

    async def delete_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: Optional[str] = None,
    ) -> None:
        """Removes the filename and every version (nothing when there is none); a new save starts at 0."""
        await self._call("delete_name", app_name, filename, **_where(app_name, user_id, filename, session_id))

    async def list_versions(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: Optional[str] = None,
    ) -> list[int]:
        """Every version number, oldest first; [] when the filename has none."""
        return [ref.version for ref in await self._version_refs(app_name, user_id, filename, session_id)]  # type: ignore[misc]

    async def list_artifact_versions(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: Optional[str] = None,
    ) -> list[Any]:
        """Every version's ArtifactVersion, oldest first; [] when the filename has none."""
        refs = await self._version_refs(app_name, user_id, filename, session_id)
        return [_to_version(ref, self.client.base_url) for ref in refs]

    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: Optional[str] = None,
        version: Optional[int] = None,
    ) -> Any:
        """One version's ArtifactVersion (the latest without `version`); None when there is none."""
        where = _where(app_name, user_id, filename, session_id)
        if not _is_version(version):
            return None
        ref = await self._call("version_ref", app_name, filename, version, **where)
        return _to_version(ref, self.client.base_url) if ref is not None else None

    # Beyond ADK

    async def version_url(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: Optional[str] = None,
        version: Optional[int] = None,
        mode: Optional[str] = None,
        expires_in: Optional[int] = None,
        disposition: Optional[str] = None,
    ) -> DownloadLink:
        """A signed link to a version (the latest without `version`) that a browser GETs without a token.

        `mode` is "proxy" (default) or "direct" (an S3 presigned URL where the service stores on S3),
        `expires_in` its lifetime in seconds, `disposition` "inline" or "attachment". A `file_data`
        version's link downloads its `text/uri-list`, not the file it names. Raises NotFoundError
        when there is no such version.
        """
        where = _where(app_name, user_id, filename, session_id)
        if not _is_version(version):
            raise InputValidationError(f"Invalid version {version!r}: versions are whole numbers from 0.")
        return await self._call(
            "version_url",
            app_name,
            filename,
            version,
            mode=mode,
            expires_in=expires_in,
            disposition=disposition,
            **where,
        )

    # Inside

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        bound = getattr(self.client, method)
        if self._is_async:
            return await bound(*args, **kwargs)
        return await asyncio.to_thread(bound, *args, **kwargs)

    async def _version_refs(
        self, app_name: str, user_id: str, filename: str, session_id: Optional[str]
    ) -> list[ArtifactRef]:
        where = _where(app_name, user_id, filename, session_id)
        refs: list[ArtifactRef] = await self._call("list_versions", app_name, filename, **where)
        return sorted((r for r in refs if r.version is not None), key=lambda r: r.version)  # type: ignore[arg-type,return-value]

    async def _all_names(self, app_name: str, **where: Any) -> list[str]:
        """Every name in the scope, page after page (the service gives at most 1,000 a page)."""
        names: list[str] = []
        cursor: str | None = None
        while True:
            page = await self._call("list_names", app_name, cursor=cursor, limit=LIST_PAGE, **where)
            names.extend(info.name for info in page.items)
            if not page.next_cursor:
                return names
            cursor = page.next_cursor


# Scopes


def _check_app(app_name: str) -> None:
    if not isinstance(app_name, str) or not _NAMESPACE.fullmatch(app_name):
        raise InputValidationError(
            f"ADK app_name {app_name!r} cannot be an artifact-store app: it must match ^[A-Za-z0-9._-]{{1,128}}$ "
            "(1-128 letters, digits, '.', '_' or '-'), because it is the namespace of its versions' artifacts."
        )


def _check_user(user_id: str) -> None:
    if not isinstance(user_id, str) or user_id == "":
        raise InputValidationError("An ADK artifact request needs a user_id: artifacts belong to a user (and a session).")


def _session(session_id: Optional[str]) -> Optional[str]:
    """ADK's own services strip the session id, as its session services store it; "" is none."""
    return session_id.strip() or None if isinstance(session_id, str) else None


def _where(app_name: str, user_id: str, filename: str, session_id: Optional[str]) -> dict[str, Any]:
    """The named-version scope of an ADK call: its user and session, or user-wide for a `user:` filename."""
    _check_app(app_name)
    _check_user(user_id)
    if not isinstance(filename, str):
        raise InputValidationError(f"filename must be a string, not {filename!r}.")
    if filename.startswith(USER_PREFIX):
        return {"user_id": user_id, "user_wide": True}
    session = _session(session_id)
    if session is None:
        raise InputValidationError(
            f"Artifact {filename!r} belongs to a session, and the request names none: "
            f'pass a session_id, or use a "{USER_PREFIX}" filename for a user-wide artifact.'
        )
    return {"user_id": user_id, "session_id": session}


def _is_version(version: Any) -> bool:
    """None (the latest) or a whole number from 0; anything else names no version."""
    return version is None or (isinstance(version, int) and not isinstance(version, bool) and version >= 0)


# Parts


def _field(value: Any, snake: str, camel: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(snake, value.get(camel))
    return getattr(value, snake, None)


def _normalize(artifact: Any) -> Any:
    """A dict artifact as a Part, as ADK's `ensure_part` makes one (with google-genai)."""
    if isinstance(artifact, Mapping) and GENAI_AVAILABLE:
        return Part.model_validate(dict(artifact))  # type: ignore[attr-defined]
    return artifact


def _bytes_of(data: Any, filename: str) -> bytes:
    if data is None:
        return b""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, str):
        # A dict's inline data, as JSON carries it: base64, standard or URL-safe alphabet.
        text = data.strip().replace("-", "+").replace("_", "/")
        try:
            return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
        except (binascii.Error, ValueError) as err:
            raise InputValidationError(f"Artifact {filename!r}: inline_data.data is not base64 ({err}).") from err
    raise InputValidationError(f"Artifact {filename!r}: inline_data.data must be bytes, not {type(data).__name__}.")


def _to_stored(artifact: Any, filename: str) -> tuple[bytes | str, dict[str, Any]]:
    """What a save sends for one Part: its data, and the put's mime type, filename and source."""
    part = _normalize(artifact)
    inline = _field(part, "inline_data", "inlineData") if part is not None else None
    text = _field(part, "text", "text") if part is not None else None
    file_data = _field(part, "file_data", "fileData") if part is not None else None
    if inline is None and text is None and file_data is None:
        raise InputValidationError(
            f"Artifact {filename!r} has no content: an artifact Part needs inline_data (bytes and a mime_type), "
            "text, or file_data (a file_uri and mime_type)."
        )
    display_name = None
    if inline is not None:
        display_name = _field(inline, "display_name", "displayName")
    if not display_name and file_data is not None:
        display_name = _field(file_data, "display_name", "displayName")
    download_name = display_name or _base_name(filename)
    if inline is not None:
        given = _field(inline, "mime_type", "mimeType")
        source: dict[str, Any] = {"part": "inlineData", "mimeType": given}
        if display_name:
            source["displayName"] = display_name
        data = _bytes_of(_field(inline, "data", "data"), filename)
        return data, {"mime_type": _puttable(given) or OCTET_STREAM, "filename": download_name, "source": {"adk": source}}
    if text is not None:
        if not isinstance(text, str):
            raise InputValidationError(f"Artifact {filename!r}: text must be a string, not {type(text).__name__}.")
        return text, {"mime_type": TEXT_MIME, "filename": download_name, "source": {"adk": {"part": "text"}}}
    uri = _field(file_data, "file_uri", "fileUri")
    if not uri:
        raise InputValidationError(f"Artifact {filename!r}: file_data needs a file_uri.")
    source = {"part": "fileData", "mimeType": _field(file_data, "mime_type", "mimeType")}
    if display_name:
        source["displayName"] = display_name
    return f"{uri}\r\n", {"mime_type": URI_LIST_MIME, "filename": download_name, "source": {"adk": source}}


def _adk_source(ref: ArtifactRef) -> dict[str, Any] | None:
    adk = (ref.source or {}).get("adk")
    return adk if isinstance(adk, dict) and adk.get("part") in _PART_KINDS else None


def _to_part(ref: ArtifactRef, data: bytes) -> Any:
    """A version's bytes as the Part that was saved (a version saved otherwise: text/plain as text)."""
    adk = _adk_source(ref)
    kind = adk["part"] if adk else ("text" if re.match(r"text/plain\b", ref.mime_type, re.IGNORECASE) else "inlineData")
    if kind == "text":
        return Part(text=_utf8(data))
    mime_type = adk["mimeType"] if adk and "mimeType" in adk else ref.mime_type
    display_name = adk.get("displayName") if adk else None
    extra: dict[str, Any] = {}
    if mime_type is not None:
        extra["mime_type"] = mime_type
    if display_name:
        extra["display_name"] = display_name
    if kind == "fileData":
        uri = _utf8(data)
        return Part(file_data=FileData(file_uri=uri[:-2] if uri.endswith("\r\n") else uri, **extra))
    return Part(inline_data=Blob(data=data, **extra))


def _to_version(ref: ArtifactRef, base_url: str) -> Any:
    """A version's ArtifactVersion: `canonical_uri` is the service's URL of the content-addressed artifact.

    `{base_url}/v1/artifacts/{id}`, fetched with the service's credentials (as a GCS service's `gs://`
    URI is). Not `artifact://{id}`: ADK for Python reads any `artifact://` URI as its own reference
    (`artifact://apps/{app}/users/{user}/…/versions/{n}`), which that form would fail to parse as.
    """
    adk = _adk_source(ref)
    mime_type: Optional[str]
    if adk and adk["part"] == "fileData":
        mime_type = adk.get("mimeType")
    else:
        own = adk.get("mimeType") if adk else None
        mime_type = own if own is not None else ref.mime_type
    return ArtifactVersion(
        version=ref.version,
        canonical_uri=f"{base_url}/v1/artifacts/{quote(ref.id, safe='')}",
        custom_metadata=dict(ref.meta) if ref.meta else {},
        create_time=ref.created_at.timestamp(),
        mime_type=mime_type,
    )


def _puttable(mime_type: Any) -> Optional[str]:
    """The part's mime type when the service takes it as it is; None otherwise (stored as octet-stream)."""
    if not isinstance(mime_type, str) or not mime_type or mime_type != mime_type.strip():
        return None
    return mime_type if _MIME.fullmatch(mime_type) else None


def _base_name(filename: str) -> str:
    """The last path segment, without the `user:` prefix: the download's filename."""
    bare = filename[len(USER_PREFIX) :] if filename.startswith(USER_PREFIX) else filename
    segments = [s for s in bare.split("/") if s]
    return segments[-1] if segments else bare


def _utf8(data: bytes) -> str:
    return data.decode("utf-8", "replace")
