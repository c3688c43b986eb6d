"""A client for artifact-store: put bytes, get small refs back, read them when needed."""

from ._async import AsyncArtifactStoreClient
from ._sync import ArtifactStoreClient
from .errors import (
    ArtifactStoreError,
    BackendUnavailableError,
    BadRequestError,
    ChecksumMismatchError,
    ForbiddenError,
    HashCollisionError,
    InvalidRangeError,
    NotFoundError,
    PayloadTooLargeError,
    QuotaExceededError,
    RateLimitedError,
    UnauthorizedError,
)
from .models import (
    ArtifactEvent,
    ArtifactRef,
    ArtifactScope,
    DownloadLink,
    LoadedVersion,
    NameInfo,
    NamePage,
    Page,
    Scope,
    SessionEnd,
    StreamedVersion,
    UploadTicket,
)
from .tokens import mint_hs256_token

__version__ = "0.1.0"

__all__ = [
    "ArtifactStoreClient",
    "AsyncArtifactStoreClient",
    "ArtifactEvent",
    "ArtifactRef",
    "ArtifactScope",
    "DownloadLink",
    "LoadedVersion",
    "NameInfo",
    "NamePage",
    "Page",
    "Scope",
    "SessionEnd",
    "StreamedVersion",
    "UploadTicket",
    "ArtifactStoreError",
    "BadRequestError",
    "UnauthorizedError",
    "ForbiddenError",
    "NotFoundError",
    "QuotaExceededError",
    "HashCollisionError",
    "PayloadTooLargeError",
    "InvalidRangeError",
    "ChecksumMismatchError",
    "RateLimitedError",
    "BackendUnavailableError",
    "mint_hs256_token",
]
