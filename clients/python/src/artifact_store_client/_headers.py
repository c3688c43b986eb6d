"""A put's options as request headers (Content-Type and X-Artifact-*).

Values that are not printable ASCII go as RFC 8187 ext-values (`UTF-8''<percent-encoded>`); where
that cannot work (a mime type, a scope part) the put is refused before anything is sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from .errors import BadRequestError
from .models import Scope

TEXT_MIME = "text/plain; charset=utf-8"
OCTET_STREAM = "application/octet-stream"

_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]*")
# A plain value of this shape would be read by the service as an RFC 8187 ext-value.
_LOOKS_LIKE_EXT_VALUE = re.compile(r"[A-Za-z0-9!#$&+^`{}~-]+'[A-Za-z0-9-]*'")


def put_headers(
    *,
    mime_type: str,
    filename: str | None,
    namespace: str | None,
    meta: Mapping[str, Any] | None,
    source: Mapping[str, Any] | None,
    ttl: int | str | None,
    sha256: str | None,
    scope: Scope,
) -> dict[str, str]:
    headers = {"Content-Type": ascii_header("mime type", mime_type)}
    if filename is not None:
        headers["X-Artifact-Filename"] = text_header(filename)
    if namespace is not None:
        headers["X-Artifact-Namespace"] = ascii_header("namespace", namespace)
    if meta is not None:
        headers["X-Artifact-Meta"] = json_header(meta)
    if source is not None:
        headers["X-Artifact-Source"] = json_header(source)
    if ttl is not None:
        headers["X-Artifact-Ttl"] = ascii_header("ttl", ttl_value(ttl))
    if sha256 is not None:
        headers["X-Artifact-Sha256"] = ascii_header("sha256", sha256)
    headers.update(scope_headers(scope))
    return headers


def scope_headers(scope: Scope) -> dict[str, str]:
    named = {"X-Artifact-Session": scope.session, "X-Artifact-Trace": scope.trace, "X-Artifact-User": scope.user}
    return {name: ascii_header(name, value) for name, value in named.items() if value is not None}


def ttl_value(ttl: int | str) -> str:
    """Seconds, or "never" for a reference that does not expire (where the operator allows it)."""
    if isinstance(ttl, bool) or not (isinstance(ttl, int) or ttl == "never"):
        raise BadRequestError(f"ttl {ttl!r} must be a whole number of seconds or 'never'.")
    return str(ttl)


def ascii_header(name: str, value: str) -> str:
    if not isinstance(value, str) or not _PRINTABLE_ASCII.fullmatch(value) or value != value.strip():
        raise BadRequestError(
            f"{name} {value!r} must be printable ASCII without surrounding spaces: it travels in an HTTP header."
        )
    return value


def text_header(value: str) -> str:
    """Plain when the service would read it back unchanged; otherwise `UTF-8''<percent-encoded>`."""
    plain = (
        _PRINTABLE_ASCII.fullmatch(value) is not None
        and value == value.strip()
        and not _LOOKS_LIKE_EXT_VALUE.match(value)
    )
    return value if plain else encode_ext_value(value)


def encode_ext_value(value: str) -> str:
    """RFC 8187: what JavaScript's encodeURIComponent leaves alone, minus ' ( ) *."""
    return "UTF-8''" + quote(value, safe="!~")


def json_header(value: Mapping[str, Any]) -> str:
    if not isinstance(value, Mapping):
        raise BadRequestError(f"meta and source must be JSON objects, not {type(value).__name__}.")
    return text_header(json.dumps(dict(value), ensure_ascii=False, separators=(",", ":")))
