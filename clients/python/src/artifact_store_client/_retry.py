"""When a request is sent again: after 429 / 503 or a connection error, waiting an exponential
backoff with jitter or what the answer's Retry-After asks, never longer than a cap."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from datetime import timezone
from email.utils import parsedate_to_datetime

RETRYABLE_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 3
    base_delay: float = 0.25
    max_delay: float = 10.0

    def backoff(self, attempt: int) -> float:
        """The wait before retry `attempt` (from 0): the doubled delay, capped, jittered over its upper half."""
        # The exponent is bounded: an event stream retries for as long as the service is away.
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** min(attempt, 32))
        return ceiling / 2 + random.random() * ceiling / 2

    def wait_after(self, retry_after: float | None, attempt: int) -> float:
        """The wait after a retryable answer: its Retry-After when it has one, else the backoff."""
        return min(self.max_delay, retry_after if retry_after is not None else self.backoff(attempt))


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: delta-seconds or an HTTP date."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        at = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return max(0.0, at.timestamp() - time.time())
