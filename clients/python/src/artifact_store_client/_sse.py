"""Server-Sent Events, parsed incrementally from the bytes of a response (chunks split anywhere)."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Message:
    id: str | None
    event: str | None
    data: str


class SseParser:
    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._reset()

    def _reset(self) -> None:
        self._id: str | None = None
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[Message]:
        text = self._pending + self._decoder.decode(chunk)
        # A chunk ending in CR may be cut in the middle of a CRLF.
        held = "\r" if text.endswith("\r") else ""
        *lines, rest = _LINE_END.split(text[: len(text) - len(held)])
        self._pending = rest + held
        messages = []
        for line in lines:
            message = self._line(line)
            if message is not None:
                messages.append(message)
        return messages

    def _line(self, line: str) -> Message | None:
        if line == "":
            if self._id is None and not self._data:
                return None
            message = Message(self._id, self._event, "\n".join(self._data))
            self._reset()
            return message
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "event":
            self._event = value
        return None
