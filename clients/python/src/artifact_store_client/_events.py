"""GET /v1/events, read as a feed that survives reconnects.

The feed keeps the stream's position (the last event id, or a bare `id:` the service sends to mark
where it stands) and asks to resume from it on every new connection, so a dropped connection, a
429 or a 503 loses no event. The clients own the loop and the waiting.
"""

from __future__ import annotations

import json

from ._core import Call
from ._headers import ascii_header
from ._sse import Message, SseParser
from .errors import BackendUnavailableError, RateLimitedError
from .models import EVENT_TYPES, ArtifactEvent, Scope

# Worth waiting out and reconnecting; any other error ends the feed.
RECONNECT_ERRORS = (BackendUnavailableError, RateLimitedError)


class EventFeed:
    def __init__(self, last_event_id: str | None, scope: Scope) -> None:
        self.last_event_id = last_event_id
        self._scope = scope
        self._parser = SseParser()

    def connect(self) -> Call:
        """The request of a new connection, resuming after the last position seen."""
        self._parser = SseParser()
        named = {"session": self._scope.session, "trace": self._scope.trace}
        params = {name: value for name, value in named.items() if value}
        headers = {"Accept": "text/event-stream"}
        if self.last_event_id:
            headers["Last-Event-ID"] = ascii_header("last_event_id", self.last_event_id)
        return Call("GET", "/v1/events", params=params, headers=headers)

    def feed(self, chunk: bytes) -> list[ArtifactEvent]:
        events = []
        for message in self._parser.feed(chunk):
            event = self._event_of(message)
            if event is not None:
                events.append(event)
        return events

    def _event_of(self, message: Message) -> ArtifactEvent | None:
        if not message.id:
            return None
        self.last_event_id = message.id
        if message.data == "":
            return None
        try:
            data = json.loads(message.data)
        except ValueError as err:
            raise BackendUnavailableError(f"An event of GET /v1/events is not JSON: {err}.") from err
        # Only changes to a reference: a stream that asked for the audit trail carries others too.
        if not isinstance(data, dict) or not data.get("ref") or data.get("type") not in EVENT_TYPES:
            return None
        try:
            return ArtifactEvent.from_json(message.id, data)
        except ValueError as err:
            raise BackendUnavailableError(f"An event of GET /v1/events did not match ArtifactEvent: {err}.") from err
