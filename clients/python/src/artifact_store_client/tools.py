"""Tools a model calls to read what was stored: the artifact tools of the TypeScript side, for any
Python agent framework.

`artifact_tools(client)` gives six `ArtifactTool`s: artifact_read, artifact_search, artifact_query,
artifact_list, artifact_info and artifact_url, with the names and camelCase arguments of the
TypeScript tools. Each has a `name`, a `description` and `parameters` (a JSON Schema object), which
is what a planner or a function-calling API registers, and is called with the model's arguments:
`await tool({"id": ref.id})` gives the text the model reads. For read, search and query that is the
service's own `text` (numbered lines and how to go on, within the budget); a refusal is text too,
`Error (code): message`, never an exception, so the model can correct itself.

Either client works. With the async client a call is awaited; with the sync one, `await tool(args)`
runs the call in a worker thread (the event loop stays free) and `tool.call_sync(args)` runs it in
the caller's thread.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ._core import query_time
from .errors import ArtifactStoreError
from .models import ArtifactRef, DownloadLink, Page, QueryResult, ReadResult, SearchResult

__all__ = ["ArtifactTool", "artifact_tools", "format_bytes", "model_ref"]

ID = {"type": "string", "description": "The artifact id, e.g. tableau.download_workbook_3f1c…"}
PAGE = {"type": "integer", "minimum": 1, "description": "PDF: which page (1-based). Default 1."}
ENTRY = {"type": "string", "description": "ZIP: the path of an entry inside the archive, as the listing shows it."}

SCHEMAS: dict[str, dict[str, Any]] = {
    "artifact_read": {
        "type": "object",
        "properties": {
            "id": ID,
            "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based). Default 1."},
            "limit": {"type": "integer", "minimum": 1, "description": "Lines at most. Default: as many as fit."},
            "page": PAGE,
            "entry": {**ENTRY, "description": ENTRY["description"] + " Default: the listing of entries."},
            "column": {
                "type": "integer",
                "minimum": 1,
                "description": "Within line `offset`, the first character (1-based): goes on with a line too long "
                "for one answer, as the previous answer says.",
            },
        },
        "required": ["id"],
    },
    "artifact_search": {
        "type": "object",
        "properties": {
            "id": ID,
            "pattern": {"type": "string", "description": "The text to find (a regular expression when regex is true)."},
            "regex": {
                "type": "boolean",
                "description": "pattern is a regular expression (JavaScript syntax, no backreferences, lookahead, or "
                "lookbehind with a capture group). Default false.",
            },
            "ignoreCase": {"type": "boolean", "description": "Match regardless of case. Default false."},
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": 20,
                "description": "Lines shown before and after each match. Default 0.",
            },
            "maxMatches": {
                "type": "integer",
                "minimum": 1,
                "maximum": 500,
                "description": "Matching lines returned at most. Default 20.",
            },
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "Search from this line on (1-based): how to get the matches after the ones returned.",
            },
            "page": {**PAGE, "description": "PDF: search this page only. Default: every page."},
            "entry": {**ENTRY, "description": ENTRY["description"] + " Default: the listing of entries."},
        },
        "required": ["id", "pattern"],
    },
    "artifact_query": {
        "type": "object",
        "properties": {
            "id": ID,
            "path": {
                "type": "string",
                "description": "An RFC 9535 JSONPath, e.g. $.issues[?@.number == 42].title or $.items[0:5].name",
            },
            "entry": {**ENTRY, "description": "ZIP: query this JSON entry of the archive."},
        },
        "required": ["id", "path"],
    },
    "artifact_list": {
        "type": "object",
        "properties": {
            "mimePrefix": {
                "type": "string",
                "description": "Only types that start with this, e.g. image/ or application/pdf",
            },
            "q": {"type": "string", "description": "Only artifacts whose id, filename or name holds this text"},
            "sort": {
                "type": "string",
                "enum": ["newest", "oldest", "largest", "smallest", "name"],
                "description": "Order (default newest first)",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1000,
                "description": "Artifacts at most. Default 100.",
            },
            "cursor": {"type": "string", "description": "nextCursor of the previous answer, for the next page."},
        },
    },
    "artifact_info": {
        "type": "object",
        "properties": {"id": ID},
        "required": ["id"],
    },
    "artifact_url": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The artifact id"},
            "mode": {
                "type": "string",
                "enum": ["proxy", "direct"],
                "description": "proxy: through the service; direct: from S3 or the CDN when configured",
            },
            "expiresIn": {
                "type": "integer",
                "minimum": 1,
                "maximum": 604800,
                "description": "Seconds the URL stays valid",
            },
        },
        "required": ["id"],
    },
}

DESCRIPTIONS = {
    "artifact_read": "Read a stored artifact as numbered lines: text, JSON, CSV, a PDF page by page (page), the "
    "listing of a ZIP or one of its entries (entry). The answer says how many lines there are and how to go on "
    "(offset, and column for a very long line). Read what you need, not the whole file.",
    "artifact_search": "Find the lines of a stored artifact that contain a text or match a regular expression "
    "(regex), with line numbers and context lines around them; then read around a match with artifact_read.",
    "artifact_query": "Select values of a stored JSON artifact (or a JSON entry of a ZIP) with an RFC 9535 "
    "JSONPath, e.g. $.issues[?@.state == 'open'].title, instead of reading the whole document.",
    "artifact_list": "List the stored artifacts you can read, newest first (or as sort says; with q, only those "
    "whose id, filename or name holds it): id, type, size, sha256, filename and where each came from. Pass "
    "nextCursor back as cursor for more.",
    "artifact_info": "Describe one stored artifact by id: type, size, sha256, filename, where it came from and "
    "when it expires.",
    "artifact_url": "A signed download URL for one artifact, for a person or a browser to fetch without a token. "
    "It expires (default 1 hour).",
}

_JSON_TYPES: dict[str, str] = {"string": "a string", "integer": "a whole number", "boolean": "true or false"}


class _Refusal(Exception):
    """Arguments a tool cannot run with: the model reads why."""


# What a tool does with its checked arguments: the client method to call, its arguments, and how the
# result becomes the text a model reads.
@dataclass(frozen=True)
class _Plan:
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    render: Callable[[Any], str]


@dataclass(frozen=True)
class ArtifactTool:
    """One tool a model can call: register `name`, `description` and `parameters`, then call it with
    the model's arguments (a dict, or its JSON text) and hand the model the string it returns."""

    name: str
    description: str
    parameters: dict[str, Any]
    client: Any = field(repr=False)
    budget: int | None = None

    @property
    def is_async(self) -> bool:
        """Whether the client underneath is the async one."""
        return inspect.iscoroutinefunction(getattr(self.client, "read", None))

    def spec(self) -> dict[str, Any]:
        """`{name, description, parameters}`: a function declaration as function-calling APIs take one."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    async def __call__(self, args: Mapping[str, Any] | str | None = None) -> str:
        try:
            plan = self._plan(args)
            method = getattr(self.client, plan.method)
            if self.is_async:
                result = await method(*plan.args, **plan.kwargs)
            else:
                result = await asyncio.to_thread(method, *plan.args, **plan.kwargs)
        except _Refusal as refusal:
            return f"Error (bad_request): {refusal}"
        except ArtifactStoreError as err:
            return refusal_text(err)
        return plan.render(result)

    def call_sync(self, args: Mapping[str, Any] | str | None = None) -> str:
        """The same as `await tool(args)`, in the caller's thread: for the sync client only."""
        if self.is_async:
            raise TypeError(f"{self.name} runs on the async client: await it (await tool(args)) instead.")
        try:
            plan = self._plan(args)
            result = getattr(self.client, plan.method)(*plan.args, **plan.kwargs)
        except _Refusal as refusal:
            return f"Error (bad_request): {refusal}"
        except ArtifactStoreError as err:
            return refusal_text(err)
        return plan.render(result)

    def _plan(self, given: Mapping[str, Any] | str | None) -> _Plan:
        a = _checked(self.name, self.parameters, given)
        budget = self.budget
        if self.name == "artifact_read":
            kwargs = _options(a, offset="offset", limit="limit", column="column", page="page", entry="entry")
            return _Plan("read", (a["id"],), {**kwargs, "budget": budget}, _view_text)
        if self.name == "artifact_search":
            kwargs = _options(
                a,
                context="context",
                max_matches="maxMatches",
                offset="offset",
                page="page",
                entry="entry",
            )
            kwargs.update(regex=a.get("regex", False), ignore_case=a.get("ignoreCase", False), budget=budget)
            return _Plan("search", (a["id"], a["pattern"]), kwargs, _view_text)
        if self.name == "artifact_query":
            kwargs = {**_options(a, entry="entry"), "budget": budget}
            return _Plan("query", (a["id"], a["path"]), kwargs, _view_text)
        if self.name == "artifact_list":
            kwargs = _options(a, mime_prefix="mimePrefix", q="q", sort="sort", limit="limit", cursor="cursor")
            return _Plan("list", (), kwargs, _listing_text)
        if self.name == "artifact_info":
            artifact_id = a["id"]
            return _Plan("meta", (artifact_id,), {}, lambda ref: _info_text(artifact_id, ref))
        if self.name == "artifact_url":
            artifact_id = a["id"]
            kwargs = _options(a, mode="mode", expires_in="expiresIn")
            return _Plan("url", (artifact_id,), kwargs, lambda link: _url_text(artifact_id, link))
        raise ValueError(f"Unknown artifact tool {self.name!r}.")


def artifact_tools(client: Any, *, budget: int | None = None) -> list[ArtifactTool]:
    """The six artifact tools over `client` (ArtifactStoreClient or AsyncArtifactStoreClient).

    `budget` caps the characters of what read, search and query answer (default: the service's view
    budget). Reads name the client's scope, so a session-bound client's tools see that session only.
    """
    return [
        ArtifactTool(name, DESCRIPTIONS[name], json.loads(json.dumps(schema)), client, budget)
        for name, schema in SCHEMAS.items()
    ]


def refusal_text(err: ArtifactStoreError) -> str:
    """What a model reads when a call failed: the code, and the service's message (what to do next)."""
    return f"Error ({err.code}): {err.message}"


def model_ref(ref: ArtifactRef) -> dict[str, Any]:
    """A reference as a model sees it: id, mimeType, sizeBytes, sha256, and filename and source when set."""
    out: dict[str, Any] = {"id": ref.id, "mimeType": ref.mime_type, "sizeBytes": ref.size_bytes, "sha256": ref.sha256}
    if ref.filename is not None:
        out["filename"] = ref.filename
    if ref.source is not None:
        out["source"] = ref.source
    return out


_BYTE_UNITS = ("KiB", "MiB", "GiB", "TiB")


def format_bytes(n: int) -> str:
    """A byte count as the service shows one: "1023 B", "1.0 KiB", "48 KiB", "5.0 TiB" (one decimal
    under 10, halves rounded up)."""
    if n < 1024:
        return f"{n} B"
    value = n / 1024
    unit = 0
    while value >= 1024 and unit < len(_BYTE_UNITS) - 1:
        value /= 1024
        unit += 1
    places = Decimal("0.1") if value < 10 else Decimal("1")
    return f"{Decimal(value).quantize(places, rounding=ROUND_HALF_UP)} {_BYTE_UNITS[unit]}"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _view_text(result: ReadResult | SearchResult | QueryResult) -> str:
    return result.text


def _listing_text(page: Page) -> str:
    return _compact({"artifacts": [model_ref(ref) for ref in page.items], "nextCursor": page.next_cursor})


def _info_text(artifact_id: str, ref: ArtifactRef | None) -> str:
    if ref is None:
        # The client answers None where the service said not_found; its message, word for word.
        return (
            f"Error (not_found): Artifact {_compact(artifact_id)} was not found in your scope. "
            "Check the id, or whether it expired or was deleted."
        )
    return _compact(
        {
            **model_ref(ref),
            "uri": f"artifact://{ref.id}",
            "createdAt": query_time(ref.created_at),
            "expiresAt": None if ref.expires_at is None else query_time(ref.expires_at),
        }
    )


def _url_text(artifact_id: str, link: DownloadLink) -> str:
    size = format_bytes(link.size_bytes)
    until = query_time(link.url_expires_at)
    return f"Download link for {artifact_id} ({size} {link.mime_type}), valid until {until}: {link.url}"


def _options(args: Mapping[str, Any], **names: str) -> dict[str, Any]:
    """The client's keyword arguments (snake_case) for the tool arguments given (camelCase)."""
    return {keyword: args[name] for keyword, name in names.items() if args.get(name) is not None}


def _usage(name: str, schema: Mapping[str, Any]) -> str:
    required = set(schema.get("required", ()))
    parts = []
    for prop, spec in schema["properties"].items():
        kind = spec.get("type", "any")
        if "enum" in spec:
            kind = " | ".join(json.dumps(v) for v in spec["enum"])
        parts.append(f'"{prop}"{"" if prop in required else "?"}: {kind}')
    return f"{name} takes {{{', '.join(parts)}}}"


def _checked(name: str, schema: Mapping[str, Any], given: Mapping[str, Any] | str | None) -> dict[str, Any]:
    """The arguments, checked against the tool's schema: required ones there, each of its type.

    Ranges are the service's to check (its message says what it accepts); names the schema does not
    know are left out, as the TypeScript tools do.
    """
    if given is None:
        given = {}
    if isinstance(given, str):
        try:
            given = json.loads(given) if given.strip() else {}
        except ValueError as err:
            raise _Refusal(f"the arguments are not JSON ({err}). {_usage(name, schema)}.") from None
    if not isinstance(given, Mapping):
        raise _Refusal(f"the arguments must be a JSON object. {_usage(name, schema)}.")
    out: dict[str, Any] = {}
    for prop, spec in schema["properties"].items():
        value = given.get(prop)
        if value is None:
            continue
        kind = spec["type"]
        if kind == "integer" and isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        ok = (
            (kind == "string" and isinstance(value, str))
            or (kind == "boolean" and isinstance(value, bool))
            or (kind == "integer" and isinstance(value, int) and not isinstance(value, bool))
        )
        if not ok:
            raise _Refusal(f'"{prop}" must be {_JSON_TYPES[kind]}, not {_compact(value)}. {_usage(name, schema)}.')
        if "enum" in spec and value not in spec["enum"]:
            allowed = " or ".join(_compact(v) for v in spec["enum"])
            raise _Refusal(f'"{prop}" must be {allowed}, not {_compact(value)}. {_usage(name, schema)}.')
        out[prop] = value
    missing = [prop for prop in schema.get("required", ()) if prop not in out]
    if missing:
        listed = " and ".join(f'"{prop}"' for prop in missing)
        raise _Refusal(f"{name} needs {listed}. {_usage(name, schema)}.")
    return out
