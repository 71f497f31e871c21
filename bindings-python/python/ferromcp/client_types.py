"""Typed results of the MCP client: the specification's fields, in Python names.

Each class is built from the JSON object the server sent (core has already
checked it against the schema) and keeps that object as ``raw``, so fields
this version does not name (extensions, ``_meta`` keys) stay reachable::

    >>> result = CallToolResult.from_dict(
    ...     {"content": [{"type": "text", "text": "42"}], "structuredContent": {"answer": 42}}
    ... )
    >>> result.text, result.structured, result.is_error
    ('42', {'answer': 42}, False)
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = [
    "CallToolResult",
    "CompleteResult",
    "DiscoverResult",
    "GetPromptResult",
    "Notification",
    "Page",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "Resource",
    "ResourceContents",
    "ResourceTemplate",
    "Skill",
    "SkillFile",
    "TaskState",
    "Tool",
]

JsonObject = dict[str, Any]

_SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


def _text_of(blocks: list[JsonObject]) -> str:
    """The text of the ``text`` blocks, one per line."""
    return "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")


@dataclass(frozen=True)
class Tool:
    """A tool the server offers (``Tool``).

    >>> Tool.from_dict({"name": "echo", "inputSchema": {"type": "object"}}).name
    'echo'
    """

    name: str
    input_schema: JsonObject
    title: str | None = None
    description: str | None = None
    output_schema: JsonObject | None = None
    annotations: JsonObject | None = None
    icons: list[JsonObject] | None = None
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The object as the server sent it."""

    @classmethod
    def from_dict(cls, d: JsonObject) -> Tool:
        """Builds it from the wire form.

        >>> Tool.from_dict({"name": "echo", "inputSchema": {"type": "object"}}).input_schema
        {'type': 'object'}
        """
        return cls(
            name=d["name"],
            input_schema=d.get("inputSchema", {}),
            title=d.get("title"),
            description=d.get("description"),
            output_schema=d.get("outputSchema"),
            annotations=d.get("annotations"),
            icons=d.get("icons"),
            meta=d.get("_meta"),
            raw=d,
        )


@dataclass(frozen=True)
class Resource:
    """A resource the server lists (``Resource``).

    >>> Resource.from_dict({"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"}).mime_type
    'text/plain'
    """

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: JsonObject | None = None
    icons: list[JsonObject] | None = None
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The object as the server sent it."""

    @classmethod
    def from_dict(cls, d: JsonObject) -> Resource:
        """Builds it from the wire form.

        >>> Resource.from_dict({"uri": "file:///a.txt", "name": "a"}).uri
        'file:///a.txt'
        """
        return cls(
            uri=d["uri"],
            name=d.get("name", ""),
            title=d.get("title"),
            description=d.get("description"),
            mime_type=d.get("mimeType"),
            size=d.get("size"),
            annotations=d.get("annotations"),
            icons=d.get("icons"),
            meta=d.get("_meta"),
            raw=d,
        )


@dataclass(frozen=True)
class ResourceTemplate:
    """A parameterised resource (``ResourceTemplate``).

    >>> ResourceTemplate.from_dict({"uriTemplate": "users://{id}", "name": "user"}).uri_template
    'users://{id}'
    """

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: JsonObject | None = None
    icons: list[JsonObject] | None = None
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The object as the server sent it."""

    @classmethod
    def from_dict(cls, d: JsonObject) -> ResourceTemplate:
        """Builds it from the wire form.

        >>> ResourceTemplate.from_dict({"uriTemplate": "users://{id}", "name": "user"}).name
        'user'
        """
        return cls(
            uri_template=d["uriTemplate"],
            name=d.get("name", ""),
            title=d.get("title"),
            description=d.get("description"),
            mime_type=d.get("mimeType"),
            annotations=d.get("annotations"),
            icons=d.get("icons"),
            meta=d.get("_meta"),
            raw=d,
        )


@dataclass(frozen=True)
class PromptArgument:
    """An argument a prompt accepts (``PromptArgument``).

    >>> PromptArgument.from_dict({"name": "topic", "required": True}).required
    True
    """

    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False

    @classmethod
    def from_dict(cls, d: JsonObject) -> PromptArgument:
        """Builds it from the wire form.

        >>> PromptArgument.from_dict({"name": "topic"}).required
        False
        """
        return cls(
            name=d["name"],
            title=d.get("title"),
            description=d.get("description"),
            required=bool(d.get("required", False)),
        )


@dataclass(frozen=True)
class Prompt:
    """A prompt the server offers (``Prompt``).

    >>> Prompt.from_dict({"name": "greet", "arguments": [{"name": "who"}]}).arguments[0].name
    'who'
    """

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] = field(default_factory=list)
    icons: list[JsonObject] | None = None
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The object as the server sent it."""

    @classmethod
    def from_dict(cls, d: JsonObject) -> Prompt:
        """Builds it from the wire form.

        >>> Prompt.from_dict({"name": "greet"}).arguments
        []
        """
        return cls(
            name=d["name"],
            title=d.get("title"),
            description=d.get("description"),
            arguments=[PromptArgument.from_dict(a) for a in d.get("arguments") or []],
            icons=d.get("icons"),
            meta=d.get("_meta"),
            raw=d,
        )


T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list, and the cursor of the next (``None`` after the last).

    >>> page = Page([1, 2], "c2")
    >>> list(page), page.next_cursor
    ([1, 2], 'c2')
    """

    items: list[T]
    next_cursor: str | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The list result as the server sent it."""

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


@dataclass(frozen=True)
class CallToolResult:
    """The result of ``tools/call`` (``CallToolResult``).

    A tool that failed is a result with ``is_error`` set (the model is meant
    to read it), not an exception; JSON-RPC errors raise.

    >>> r = CallToolResult.from_dict({"content": [{"type": "text", "text": "boom"}], "isError": True})
    >>> r.is_error, r.text
    (True, 'boom')
    """

    content: list[JsonObject]
    structured_content: Any = None
    is_error: bool = False
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The result as the server sent it."""

    @classmethod
    def from_dict(cls, d: JsonObject) -> CallToolResult:
        """Builds it from the wire form.

        >>> CallToolResult.from_dict({"content": [{"type": "text", "text": "ok"}]}).is_error
        False
        """
        return cls(
            content=d.get("content", []),
            structured_content=d.get("structuredContent"),
            is_error=bool(d.get("isError", False)),
            meta=d.get("_meta"),
            raw=d,
        )

    @property
    def text(self) -> str:
        """The text content blocks, one per line (``""`` when there are none).

        >>> CallToolResult.from_dict({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}).text
        'a\\nb'
        """
        return _text_of(self.content)

    @property
    def structured(self) -> Any:
        """The structured content (``structuredContent``), or ``None``.

        >>> CallToolResult.from_dict({"content": [], "structuredContent": {"sum": 3}}).structured
        {'sum': 3}
        """
        return self.structured_content


@dataclass(frozen=True)
class ResourceContents:
    """One item of a resource's contents: text or a base64 ``blob``.

    >>> ResourceContents.from_dict({"uri": "x:/", "blob": "aGk="}).data
    b'hi'
    """

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    meta: JsonObject | None = None

    @classmethod
    def from_dict(cls, d: JsonObject) -> ResourceContents:
        """Builds it from the wire form.

        >>> ResourceContents.from_dict({"uri": "a:/", "text": "hi"}).text
        'hi'
        """
        return cls(
            uri=d.get("uri", ""),
            mime_type=d.get("mimeType"),
            text=d.get("text"),
            blob=d.get("blob"),
            meta=d.get("_meta"),
        )

    @property
    def data(self) -> bytes:
        """The bytes: the decoded blob, or the text encoded as UTF-8.

        >>> ResourceContents.from_dict({"uri": "a:/", "text": "hi"}).data
        b'hi'
        """
        if self.blob is not None:
            return base64.b64decode(self.blob)
        return (self.text or "").encode()


@dataclass(frozen=True)
class ReadResourceResult:
    """The result of ``resources/read`` (``ReadResourceResult``).

    >>> ReadResourceResult.from_dict({"contents": [{"uri": "a:/", "text": "hello"}]}).text
    'hello'
    """

    contents: list[ResourceContents]
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The result as the server sent it."""

    @classmethod
    def from_dict(cls, d: JsonObject) -> ReadResourceResult:
        """Builds it from the wire form.

        >>> len(ReadResourceResult.from_dict({"contents": [{"uri": "a:/", "text": "hi"}]}).contents)
        1
        """
        return cls(
            contents=[ResourceContents.from_dict(c) for c in d.get("contents", [])],
            meta=d.get("_meta"),
            raw=d,
        )

    @property
    def text(self) -> str:
        """The text contents, one per line.

        >>> contents = [{"uri": "a:/", "text": "a"}, {"uri": "b:/", "blob": "aGk="}, {"uri": "c:/", "text": "c"}]
        >>> ReadResourceResult.from_dict({"contents": contents}).text.splitlines()
        ['a', 'c']
        """
        return "\n".join(c.text for c in self.contents if c.text is not None)


@dataclass(frozen=True)
class PromptMessage:
    """One message of a prompt: a ``role`` and one content block.

    >>> PromptMessage.from_dict({"role": "user", "content": {"type": "text", "text": "hi"}}).text
    'hi'
    """

    role: str
    content: JsonObject

    @classmethod
    def from_dict(cls, d: JsonObject) -> PromptMessage:
        """Builds it from the wire form.

        >>> PromptMessage.from_dict({"role": "assistant", "content": {"type": "text", "text": "ok"}}).role
        'assistant'
        """
        return cls(role=d["role"], content=d.get("content", {}))

    @property
    def text(self) -> str:
        """The content's text, or ``""`` for a non-text block.

        >>> image = {"type": "image", "data": "", "mimeType": "image/png"}
        >>> PromptMessage.from_dict({"role": "user", "content": image}).text
        ''
        """
        return str(self.content.get("text", "")) if self.content.get("type") == "text" else ""


@dataclass(frozen=True)
class GetPromptResult:
    """The result of ``prompts/get`` (``GetPromptResult``).

    >>> r = GetPromptResult.from_dict({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]})
    >>> r.messages[0].role, r.text
    ('user', 'hi')
    """

    messages: list[PromptMessage]
    description: str | None = None
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The result as the server sent it."""

    @classmethod
    def from_dict(cls, d: JsonObject) -> GetPromptResult:
        """Builds it from the wire form.

        >>> GetPromptResult.from_dict({"description": "d", "messages": []}).messages
        []
        """
        return cls(
            messages=[PromptMessage.from_dict(m) for m in d.get("messages", [])],
            description=d.get("description"),
            meta=d.get("_meta"),
            raw=d,
        )

    @property
    def text(self) -> str:
        """The text of the messages, one per line.

        >>> def message(role: str, text: str) -> dict:
        ...     return {"role": role, "content": {"type": "text", "text": text}}
        >>> messages = [message("user", "a"), message("assistant", "b")]
        >>> GetPromptResult.from_dict({"messages": messages}).text.splitlines()
        ['a', 'b']
        """
        return "\n".join(m.text for m in self.messages if m.text)


@dataclass(frozen=True)
class CompleteResult:
    """The result of ``completion/complete``: suggested ``values``.

    >>> CompleteResult.from_dict({"completion": {"values": ["py", "pyo3"], "hasMore": False}}).values
    ['py', 'pyo3']
    """

    values: list[str]
    total: int | None = None
    has_more: bool = False
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The result as the server sent it."""

    @classmethod
    def from_dict(cls, d: JsonObject) -> CompleteResult:
        """Builds it from the wire form.

        >>> CompleteResult.from_dict({"completion": {"values": ["a"], "total": 1}}).total
        1
        """
        completion = d.get("completion", {})
        return cls(
            values=list(completion.get("values", [])),
            total=completion.get("total"),
            has_more=bool(completion.get("hasMore", False)),
            raw=d,
        )


@dataclass(frozen=True)
class DiscoverResult:
    """What the server says about itself (``server/discover``; for a
    2025-11-25 server, its ``initialize`` answer).

    >>> d = DiscoverResult.from_dict({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
    ...     "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "demo", "version": "1"}}})
    >>> d.supported_versions, d.server_info["name"]
    (['2026-07-28'], 'demo')
    >>> legacy = DiscoverResult.from_dict({"protocolVersion": "2025-11-25", "capabilities": {},
    ...     "serverInfo": {"name": "old", "version": "1"}})
    >>> legacy.supported_versions, legacy.server_info["name"]
    (['2025-11-25'], 'old')
    """

    supported_versions: list[str]
    capabilities: JsonObject
    server_info: JsonObject | None = None
    instructions: str | None = None
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The result as the server sent it."""

    @classmethod
    def from_dict(cls, d: JsonObject) -> DiscoverResult:
        """Builds it from the wire form.

        >>> info = {"name": "s", "version": "1"}
        >>> wire = {"supportedVersions": ["2026-07-28"], "capabilities": {}, "serverInfo": info}
        >>> DiscoverResult.from_dict(wire).capabilities
        {}
        """
        meta = d.get("_meta")
        info = d.get("serverInfo")
        if info is None and isinstance(meta, Mapping):
            info = meta.get(_SERVER_INFO_KEY)
        versions = d.get("supportedVersions")
        if versions is None:  # an initialize result names the one negotiated version
            versions = [d["protocolVersion"]] if "protocolVersion" in d else []
        return cls(
            supported_versions=list(versions),
            capabilities=d.get("capabilities", {}),
            server_info=info,
            instructions=d.get("instructions"),
            meta=meta,
            raw=d,
        )


@dataclass(frozen=True)
class Notification:
    """A notification delivered by ``listen()``: its ``method`` and ``params``.

    >>> n = Notification.from_dict({"method": "notifications/resources/updated", "params": {"uri": "a:/"}})
    >>> n.method, n.uri
    ('notifications/resources/updated', 'a:/')
    """

    method: str
    params: JsonObject

    @classmethod
    def from_dict(cls, d: JsonObject) -> Notification:
        """Builds it from what the native subscription delivers.

        >>> Notification.from_dict({"method": "notifications/tools/list_changed"}).params
        {}
        """
        params = d.get("params")
        return cls(method=d["method"], params=params if isinstance(params, dict) else {})

    @property
    def uri(self) -> str | None:
        """The resource URI of a ``notifications/resources/updated``.

        >>> Notification.from_dict({"method": "notifications/tools/list_changed"}).uri is None
        True
        """
        uri = self.params.get("uri")
        return uri if isinstance(uri, str) else None


@dataclass(frozen=True)
class SkillFile:
    """One file of a skill as its entry lists it: URI, ``sha256:`` digest
    and size of the raw bytes.

    >>> SkillFile.from_dict({"uri": "skill://a/SKILL.md", "digest": "sha256:00", "size": 3}).size
    3
    """

    uri: str
    digest: str
    size: int

    @classmethod
    def from_dict(cls, d: JsonObject) -> SkillFile:
        """Builds it from the wire form.

        >>> SkillFile.from_dict({"uri": "skill://a/x.md", "digest": "sha256:00", "size": 0}).uri
        'skill://a/x.md'
        """
        return cls(uri=d["uri"], digest=d["digest"], size=int(d["size"]))


@dataclass(frozen=True)
class Skill:
    """A skill a server offers (the skills extension, SEP-2640), as
    ``skills/list`` and ``skills/get`` describe it. Listing reads no file:
    :meth:`ferromcp.Client.load_skill` reads and checks ``SKILL.md``.

    >>> s = Skill.from_dict({"uri": "skill://pdf/SKILL.md",
    ...     "frontmatter": {"name": "pdf", "description": "PDF forms"}, "resources": "dynamic"})
    >>> s.name, s.description, s.files
    ('pdf', 'PDF forms', None)
    """

    uri: str
    """The ``SKILL.md`` URI: the skill's identity on this server."""
    frontmatter: JsonObject
    """The ``SKILL.md`` YAML frontmatter, as written."""
    files: list[SkillFile] | None
    """Every file with its digest and size; ``None`` for a skill whose
    content is generated (``"dynamic"``: no integrity offered)."""
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The entry as the server sent it."""

    @classmethod
    def from_dict(cls, d: JsonObject) -> Skill:
        """Builds it from the wire form.

        >>> Skill.from_dict({"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"},
        ...     "resources": [{"uri": "skill://a/SKILL.md", "digest": "sha256:00", "size": 1}]}).files[0].size
        1
        """
        resources = d.get("resources")
        files = [SkillFile.from_dict(f) for f in resources] if isinstance(resources, list) else None
        return cls(uri=d["uri"], frontmatter=dict(d.get("frontmatter") or {}), files=files, raw=d)

    @property
    def name(self) -> str:
        """``frontmatter["name"]``.

        >>> Skill.from_dict({"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"}, "resources": []}).name
        'a'
        """
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str | None:
        """``frontmatter["description"]``, if any.

        >>> entry = {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"}, "resources": []}
        >>> Skill.from_dict(entry).description is None
        True
        """
        description = self.frontmatter.get("description")
        return description if isinstance(description, str) else None


@dataclass(frozen=True)
class TaskState:
    """A task's state as ``tasks/get`` answers it (the tasks extension,
    SEP-2663): its status and, by status, the questions it waits on
    (``input_required``), its result (``completed``) or its error
    (``failed``).

    >>> t = TaskState.from_dict({"taskId": "t1", "status": "input_required", "ttlMs": None,
    ...     "inputRequests": {"confirm": {"method": "elicitation/create", "params": {}}}})
    >>> t.task_id, t.status, list(t.input_requests), t.done
    ('t1', 'input_required', ['confirm'], False)
    """

    task_id: str
    status: str
    """``working``, ``input_required``, ``completed``, ``failed`` or ``cancelled``."""
    status_message: str | None = None
    input_requests: JsonObject = field(default_factory=dict)
    """``input_required``: the outstanding requests by key; answer them with
    :meth:`ferromcp.ToolTask.respond`."""
    result: CallToolResult | None = None
    """``completed``: the tool's result."""
    error: JsonObject | None = None
    """``failed``: the JSON-RPC error object."""
    poll_interval_ms: int | None = None
    ttl_ms: int | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The task as the server sent it."""

    @classmethod
    def from_dict(cls, d: JsonObject) -> TaskState:
        """Builds it from the wire form.

        >>> TaskState.from_dict({"taskId": "t", "status": "completed",
        ...     "result": {"content": [{"type": "text", "text": "ok"}]}}).result.text
        'ok'
        """
        result = d.get("result")
        error = d.get("error")
        return cls(
            task_id=str(d.get("taskId", "")),
            status=str(d.get("status", "")),
            status_message=d.get("statusMessage"),
            input_requests=dict(d.get("inputRequests") or {}),
            result=CallToolResult.from_dict(result) if isinstance(result, dict) else None,
            error=error if isinstance(error, dict) else None,
            poll_interval_ms=d.get("pollIntervalMs"),
            ttl_ms=d.get("ttlMs"),
            raw=d,
        )

    @property
    def done(self) -> bool:
        """Whether the task has ended (``completed``, ``failed`` or ``cancelled``).

        >>> TaskState.from_dict({"taskId": "t", "status": "cancelled"}).done
        True
        """
        return self.status in ("completed", "failed", "cancelled")
