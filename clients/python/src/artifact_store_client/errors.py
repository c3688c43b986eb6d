"""The service's errors as exceptions: one class per wire code, all under ArtifactStoreError."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._retry import retry_after_seconds

__all__ = [
    "ArtifactStoreError",
    "BadRequestError",
    "UnauthorizedError",
    "ForbiddenError",
    "NotFoundError",
    "QuotaExceededError",
    "HashCollisionError",
    "PayloadTooLargeError",
    "UnsupportedTypeError",
    "InvalidRangeError",
    "ChecksumMismatchError",
    "UnprocessableError",
    "RateLimitedError",
    "BackendUnavailableError",
    "error_for",
]


class ArtifactStoreError(Exception):
    """An error the service answered with, or one the client met on its behalf."""

    code = "unknown"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        # None when no HTTP answer came back (the service was not reached, or the client refused first).
        self.status = status
        self.details: dict[str, Any] = dict(details or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status}, message={self.message!r})"


class _Retryable(ArtifactStoreError):
    """Errors whose answer may say when to try again."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class BadRequestError(ArtifactStoreError):
    code = "bad_request"


class UnauthorizedError(ArtifactStoreError):
    code = "unauthorized"


class ForbiddenError(ArtifactStoreError):
    code = "forbidden"


class NotFoundError(ArtifactStoreError):
    code = "not_found"


class QuotaExceededError(ArtifactStoreError):
    code = "quota_exceeded"


class HashCollisionError(ArtifactStoreError):
    code = "hash_collision"


class PayloadTooLargeError(ArtifactStoreError):
    code = "payload_too_large"


class UnsupportedTypeError(ArtifactStoreError):
    """The artifact has no view of the kind asked for (the lines of a binary file, say)."""

    code = "unsupported_type"


class InvalidRangeError(ArtifactStoreError):
    code = "invalid_range"


class ChecksumMismatchError(ArtifactStoreError):
    code = "checksum_mismatch"


class UnprocessableError(ArtifactStoreError):
    """The content cannot be read this way: malformed (a broken PDF), or over a limit that protects
    the service (a ZIP bomb, a document too large to index)."""

    code = "unprocessable"


class RateLimitedError(_Retryable):
    code = "rate_limited"


class BackendUnavailableError(_Retryable):
    code = "backend_unavailable"


_BY_CODE: dict[str, type[ArtifactStoreError]] = {
    cls.code: cls
    for cls in (
        BadRequestError,
        UnauthorizedError,
        ForbiddenError,
        NotFoundError,
        QuotaExceededError,
        HashCollisionError,
        PayloadTooLargeError,
        UnsupportedTypeError,
        InvalidRangeError,
        ChecksumMismatchError,
        UnprocessableError,
        RateLimitedError,
        BackendUnavailableError,
    )
}

# 409 and 422 are left out: 409 means a quota or a hash collision, 422 a checksum mismatch or content
# that cannot be read, and only the body says which.
_BY_STATUS: dict[int, type[ArtifactStoreError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    413: PayloadTooLargeError,
    415: UnsupportedTypeError,
    416: InvalidRangeError,
    429: RateLimitedError,
}


def error_for(
    status: int,
    body: bytes,
    headers: Mapping[str, str],
    *,
    request: str,
) -> ArtifactStoreError:
    """The exception an unsuccessful answer stands for.

    The service's `{code, message, details?}` body decides; a body of another shape (a proxy's HTML
    page, a bodyless HEAD answer) falls back on the status, and the message says what came back.
    """
    retry_after = retry_after_seconds(headers.get("retry-after"))
    parsed = _json_object(body)
    code = parsed.get("code") if parsed else None
    if parsed and isinstance(code, str) and code in _BY_CODE and isinstance(parsed.get("message"), str):
        details = parsed.get("details")
        return _build(
            _BY_CODE[code],
            parsed["message"],
            status=status,
            details=details if isinstance(details, dict) else None,
            retry_after=retry_after,
        )
    cls = _BY_STATUS.get(status, BackendUnavailableError if status >= 500 else BadRequestError)
    snippet = " ".join(body.decode("utf-8", "replace").split())[:200]
    message = f"{request} answered HTTP {status}" + (f": {snippet}" if snippet else "") + "."
    return _build(cls, message, status=status, details={"status": status}, retry_after=retry_after)


def _build(
    cls: type[ArtifactStoreError],
    message: str,
    *,
    status: int,
    details: Mapping[str, Any] | None,
    retry_after: float | None,
) -> ArtifactStoreError:
    if issubclass(cls, _Retryable):
        return cls(message, status=status, details=details, retry_after=retry_after)
    return cls(message, status=status, details=details)


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
