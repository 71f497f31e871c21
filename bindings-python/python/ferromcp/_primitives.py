"""Tools, resources, resource templates, prompts and completions from Python functions.

Each function is read once, at registration: which parameters it takes
(tool arguments, template variables, prompt arguments, the
:class:`~ferromcp.Context`), how each value from the wire converts to the
annotated type, and the definition the core lists (a tool's schemas are
derived in ``_schema``). The adapters built here follow the native
calling convention ``handler(input, ctx)``; the core turns what they return
into results (its ``FromHost`` rules), so nothing here assembles protocol
results.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import _native
from ._callables import is_coroutine_function
from ._docstring import parse_docstring
from ._schema import ToolSignature, from_text
from .context import Context
from .errors import InvalidParamsError

__all__ = [
    "CompletionRouter",
    "Handler",
    "prompt_handler",
    "resource_handler",
    "tool_handler",
]

Handler = Callable[[Any, Any], Any]
"""The native convention: ``handler(input, native_ctx)``."""

CompletionSource = Callable[..., Any] | Sequence[str]
"""A completion function (``fn(value, [arguments], [ctx])``) or a fixed list
of candidate values (filtered by prefix)."""


@dataclass
class _Param:
    name: str
    hint: Any
    required: bool
    description: str | None


@dataclass
class _Signature:
    """A function's parameters, apart from the one taking the Context."""

    description: str | None
    params: list[_Param] = field(default_factory=list)
    context: str | None = None


def _read_signature(fn: Callable[..., Any], what: str) -> _Signature:
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except TypeError:
        hints = {}
    except NameError as e:
        raise TypeError(f"cannot resolve the type hints of {what} {getattr(fn, '__qualname__', fn)!r}: {e}") from None
    doc = parse_docstring(inspect.getdoc(fn))
    out = _Signature(doc.description)
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"parameter {name!r} of {what} {fn.__name__!r} is positional-only")
        hint = hints.get(name, param.annotation)
        bare = hint
        description = doc.params.get(name)
        while typing.get_origin(bare) is typing.Annotated:
            args = typing.get_args(bare)
            bare = args[0]
            description = next((a for a in args[1:] if isinstance(a, str)), description)
        if bare is Context:
            out.context = name
            continue
        out.params.append(_Param(name, hint, param.default is inspect.Parameter.empty, description))
    return out


def _converted(params: list[_Param], strings: Mapping[str, Any], what: str) -> dict[str, Any]:
    """Keyword arguments from wire strings, each converted to its annotation."""
    kwargs: dict[str, Any] = {}
    for p in params:
        if p.name not in strings:
            continue
        value = strings[p.name]
        if isinstance(value, str):
            try:
                value = from_text(p.hint, value)
            except (ValueError, TypeError) as e:
                raise InvalidParamsError(f"{what} {p.name!r}: {e}", data={"name": p.name}) from None
        kwargs[p.name] = value
    return kwargs


def _adapt(
    fn: Callable[..., Any],
    is_async: bool,
    context: str | None,
    keywords: Callable[[Any], dict[str, Any]],
) -> Handler:
    """The native handler calling ``fn(**keywords(input), [ctx])``."""
    if is_async:
        coroutine_fn: Callable[..., Awaitable[Any]] = fn

        async def call_async(data: Any, native_ctx: Any) -> Any:
            kwargs = keywords(data)
            if context is not None:
                kwargs[context] = Context(native_ctx, asynchronous=True)
            return await coroutine_fn(**kwargs)

        return call_async

    def call(data: Any, native_ctx: Any) -> Any:
        kwargs = keywords(data)
        if context is not None:
            kwargs[context] = Context(native_ctx, asynchronous=False)
        return fn(**kwargs)

    return call


def tool_handler(fn: Callable[..., Any], signature: ToolSignature, is_async: bool) -> Handler:
    """Adapts a tool function to the native convention ``handler(arguments, ctx)``:
    each argument goes to the parameter of that name, converted to its
    annotation where it needs it (``signature``, from ``_schema``).

    >>> from ferromcp._schema import tool_signature
    >>> def add(a: int, b: int = 1) -> int:
    ...     return a + b
    >>> handler = tool_handler(add, tool_signature(add, Context), is_async=False)
    >>> handler({"a": 2}, None)
    3
    """
    parameters = signature.parameters
    known = {p.name for p in parameters}
    context_name = signature.context_parameter
    accepts_extra = signature.accepts_extra

    def keywords(arguments: dict[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        for p in parameters:
            if p.name in arguments:
                value = arguments[p.name]
                kwargs[p.name] = p.convert(value) if p.convert is not None and value is not None else value
        if accepts_extra:
            for key, value in arguments.items():
                if key not in known and key != context_name:
                    kwargs[key] = value
        return kwargs

    return _adapt(fn, is_async, context_name, keywords)


@dataclass
class ResourceSpec:
    """What the core needs to register a resource or template."""

    definition: dict[str, Any]
    handler: Handler
    is_async: bool
    template: bool
    variables: list[str]


def resource_handler(fn: Callable[..., Any], uri: str, definition: dict[str, Any]) -> ResourceSpec:
    """Reads a resource function: a template URI (with ``{variables}``) binds
    each variable to the parameter of that name, converted to its annotation.

    >>> def profile(id: int) -> str:
    ...     return f"user {id}"
    >>> spec = resource_handler(profile, "users://{id}/profile", {})
    >>> spec.template, spec.variables
    (True, ['id'])
    >>> spec.handler({"uri": "users://7/profile", "variables": {"id": "7"}}, None)
    'user 7'
    """
    signature = _read_signature(fn, "resource")
    is_template = "{" in uri
    variables = _native.uri_template_variables(uri) if is_template else []
    names = {p.name for p in signature.params}
    for p in signature.params:
        if p.name not in variables and p.required:
            raise TypeError(
                f"parameter {p.name!r} of resource {fn.__name__!r} is not a variable of {uri!r}"
                + (f" (variables: {', '.join(variables)})" if variables else "")
            )
    missing = [v for v in variables if v not in names]
    accepts_extra = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
    if missing and not accepts_extra:
        raise TypeError(
            f"resource {fn.__name__!r} takes no parameter for the variable(s) {', '.join(missing)} of {uri!r}"
        )
    params = signature.params

    def keywords(request: Any) -> dict[str, Any]:
        strings = request.get("variables", {}) if isinstance(request, Mapping) else {}
        kwargs = _converted(params, strings, "URI variable")
        if accepts_extra:
            for k, v in strings.items():
                kwargs.setdefault(k, v)
        return kwargs

    definition = dict(definition)
    if signature.description is not None:
        definition.setdefault("description", signature.description)
    is_async = is_coroutine_function(fn)
    return ResourceSpec(definition, _adapt(fn, is_async, signature.context, keywords), is_async, is_template, variables)


@dataclass
class PromptSpec:
    """What the core needs to register a prompt."""

    definition: dict[str, Any]
    handler: Handler
    is_async: bool


def prompt_handler(fn: Callable[..., Any], definition: dict[str, Any]) -> PromptSpec:
    """Reads a prompt function: each parameter is a prompt argument (required
    without a default; described by ``Annotated[str, "..."]`` or the
    docstring's ``Args:``), converted from the wire's string to its annotation.

    >>> def review(code: str, level: int = 1) -> str:
    ...     '''Reviews code.'''
    ...     return f"review {code} at {level}"
    >>> spec = prompt_handler(review, {"name": "review"})
    >>> spec.definition["arguments"]
    [{'name': 'code', 'required': True}, {'name': 'level', 'required': False}]
    >>> spec.handler({"code": "x", "level": "2"}, None)
    'review x at 2'
    """
    signature = _read_signature(fn, "prompt")
    arguments: list[dict[str, Any]] = []
    for p in signature.params:
        argument: dict[str, Any] = {"name": p.name}
        if p.description:
            argument["description"] = p.description
        argument["required"] = p.required
        arguments.append(argument)
    params = signature.params

    def keywords(arguments: Any) -> dict[str, Any]:
        return _converted(params, arguments if isinstance(arguments, Mapping) else {}, "prompt argument")

    definition = dict(definition)
    if signature.description is not None:
        definition.setdefault("description", signature.description)
    if arguments:
        definition.setdefault("arguments", arguments)
    is_async = is_coroutine_function(fn)
    return PromptSpec(definition, _adapt(fn, is_async, signature.context, keywords), is_async)


@dataclass
class _Completer:
    fn: Callable[..., Any]
    is_async: bool
    value_param: str | None
    arguments_param: str | None
    context: str | None


def _completer(source: CompletionSource) -> _Completer:
    if not callable(source):
        candidates = [str(v) for v in source]

        def fixed(value: str) -> list[str]:
            return [c for c in candidates if c.startswith(value)]

        return _Completer(fixed, False, "value", None, None)
    signature = _read_signature(source, "completion")
    value_param: str | None = None
    arguments_param: str | None = None
    for p in signature.params:
        if p.name == "arguments":
            arguments_param = p.name
        elif value_param is None:
            value_param = p.name
    return _Completer(source, is_coroutine_function(source), value_param, arguments_param, signature.context)


class CompletionRouter:
    """The one ``completion/complete`` provider of a server: routes each
    request by its reference (a prompt's name or a template's URI) and
    argument to the function registered for it. The core has already
    checked that the reference exists; an argument nobody completes gets no
    values.

    >>> router = CompletionRouter()
    >>> router.add("ref/prompt", "greet", "name", ["Ada", "Alan", "Grace"])
    >>> router.handler({"ref": {"type": "ref/prompt", "name": "greet"},
    ...                 "argument": {"name": "name", "value": "A"}}, None)
    ['Ada', 'Alan']
    """

    def __init__(self) -> None:
        self._completers: dict[tuple[str, str, str], _Completer] = {}

    @property
    def is_async(self) -> bool:
        """Whether any completer is ``async def`` (then the provider is too,
        and plain completers run on the serving loop)."""
        return any(c.is_async for c in self._completers.values())

    def __bool__(self) -> bool:
        return bool(self._completers)

    def add(self, ref_type: str, ref: str, argument: str, source: CompletionSource) -> None:
        """Registers (or replaces) what completes ``argument`` of ``ref``."""
        self._completers[(ref_type, ref, argument)] = _completer(source)

    def discard(self, ref_type: str, ref: str) -> None:
        """Forgets the completers of a removed prompt or template."""
        for key in [k for k in self._completers if k[:2] == (ref_type, ref)]:
            del self._completers[key]

    def _find(self, params: Any) -> tuple[_Completer | None, dict[str, Any]]:
        ref = params.get("ref", {})
        argument = params.get("argument", {})
        ref_type = ref.get("type", "")
        name = ref.get("name", "") if ref_type == "ref/prompt" else ref.get("uri", "")
        completer = self._completers.get((ref_type, name, argument.get("name", "")))
        kwargs: dict[str, Any] = {}
        if completer is not None:
            if completer.value_param is not None:
                kwargs[completer.value_param] = argument.get("value", "")
            if completer.arguments_param is not None:
                context = params.get("context") or {}
                kwargs[completer.arguments_param] = dict(context.get("arguments") or {})
        return completer, kwargs

    def handler(self, params: Any, native_ctx: Any) -> Any:
        """The sync provider (no completer is async)."""
        completer, kwargs = self._find(params)
        if completer is None:
            return []
        if completer.context is not None:
            kwargs[completer.context] = Context(native_ctx, asynchronous=False)
        return completer.fn(**kwargs)

    async def async_handler(self, params: Any, native_ctx: Any) -> Any:
        """The async provider (some completer is async)."""
        completer, kwargs = self._find(params)
        if completer is None:
            return []
        if completer.context is not None:
            kwargs[completer.context] = Context(native_ctx, asynchronous=completer.is_async)
        result = completer.fn(**kwargs)
        return await result if completer.is_async else result
