"""The ``ferromcp`` command that ``pip install ferromcp`` installs (also
``python -m ferromcp``).

Every command but ``run`` is the Rust command line itself (``tools``,
``call``, ``read``, ``prompts``, ``discover``, ``login``, ``logout``,
``proxy``, ...), run in this process: the same program, options, output and
exit statuses as the ``ferromcp`` binary. ``run`` is this package's own: it
serves the :class:`ferromcp.Server` a Python file defines. ::

    $ ferromcp tools --stdio 'python server.py'
    $ ferromcp call --url http://127.0.0.1:8000/mcp echo '{"text": "hi"}'
    $ ferromcp run server.py                  # stdio
    $ ferromcp run server.py --http 8000      # http://127.0.0.1:8000/mcp
    $ ferromcp run server.py --reload         # restarted when a file beside it changes
    $ ferromcp run myapp.tools:mcp            # a module, and the Server's name in it

>>> main(["--version"])  # the version goes to the process's stdout
0
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType

from . import _native
from .server import Server

__all__ = ["NoServerError", "find_server", "main", "run"]

RUN_USAGE = """\
Serve the ferromcp.Server a Python file or module defines

Usage: ferromcp run [OPTIONS] <FILE[:NAME] | MODULE:NAME>

Arguments:
  <FILE[:NAME]>  A Python file (its folder goes first on sys.path) or a
                 module (`package.module:NAME`); the Server named NAME in it,
                 else its attribute `server`, `mcp` or `app`, else the only
                 Server it defines

Options:
      --http <PORT>  Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio
      --host <ADDR>  Address the HTTP server listens on [default: 127.0.0.1]
      --reload       Restart the server when a file in FILE's folder changes; the
                     client stays connected and is told the lists changed
  -h, --help         Print help
"""

# What `ferromcp --help` adds after the Rust command line's own help.
_RUN_NOTE = """
The Python package adds:
  run         Serve the Server a Python file defines (ferromcp run --help)
"""

# The attribute names looked at, in order, when the target names none.
_CONVENTIONAL_NAMES = ("server", "mcp", "app")


class NoServerError(Exception):
    """The target defines no :class:`ferromcp.Server` to serve (or several,
    none of them chosen); the message says what it found.

    >>> import types
    >>> find_server(types.ModuleType("empty"), None, "empty.py")
    Traceback (most recent call last):
    ...
    ferromcp.cli.NoServerError: empty.py defines no ferromcp.Server (it defines nothing); ...
    """


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``ferromcp`` command with ``argv`` (default: ``sys.argv[1:]``)
    and returns its exit status: 0 on success, 1 when the command failed, 2
    for a usage error. The installed ``ferromcp`` script and
    ``python -m ferromcp`` exit with it.

    >>> main(["no-such-command"])  # clap prints the usage error to stderr
    2
    >>> main(["run", "--http", "eighty"])
    2
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["run"]:
        return run(args[1:])
    if args[:2] == ["help", "run"]:
        return run(["--help"])
    _log_to_stderr()
    status = _command_line(["ferromcp", *args])
    if status == 0 and len(args) == 1 and args[0] in ("--help", "-h", "help"):
        _write_stdout(_RUN_NOTE)
    return status


def _write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


@contextlib.contextmanager
def _default_sigint() -> Iterator[None]:
    """Ctrl-C while the Rust command runs: what it does to the binary. The
    command runs with the GIL released, so Python's own SIGINT handler would
    only note the signal until the command ends; with the default action a
    waiting ``ferromcp call`` ends at once, and a serving ``proxy`` (which
    installs its own handler) stops gracefully."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _command_line(argv: list[str]) -> int:
    """The Rust command line, with Python's buffered output written first."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with _default_sigint():
        return _native.cli_main(argv)


@dataclass(frozen=True)
class _RunOptions:
    target: str
    port: int | None
    host: str | None
    reload: bool


class _UsageError(Exception):
    pass


def _parse_run(args: Sequence[str]) -> _RunOptions | None:
    """``run``'s options; ``None`` for ``--help``. Raises :class:`_UsageError`."""
    positionals: list[str] = []
    port: str | None = None
    host: str | None = None
    reload = False
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in ("-h", "--help"):
            return None
        if arg == "--reload":
            reload = True
        elif arg.split("=", 1)[0] in ("--http", "--host"):
            name, _, value = arg.partition("=")
            if not value and "=" not in arg:
                if not rest:
                    raise _UsageError(f"a value is required for '{name} <{'PORT' if name == '--http' else 'ADDR'}>'")
                value = rest.pop(0)
            if name == "--http":
                port = value
            else:
                host = value
        elif arg == "--":
            positionals.extend(rest)
            rest = []
        elif arg.startswith("-") and arg != "-":
            raise _UsageError(f"unexpected argument '{arg}' found")
        else:
            positionals.append(arg)
    if len(positionals) != 1:
        raise _UsageError(
            "the FILE to serve is required"
            if not positionals
            else f"one FILE only, got {len(positionals)}: {' '.join(positionals)}"
        )
    number: int | None = None
    if port is not None:
        if not port.isdigit() or int(port) > 65535:
            raise _UsageError(f"invalid --http PORT '{port}': a number from 0 to 65535")
        number = int(port)
    elif host is not None:
        raise _UsageError("--host needs --http PORT")
    return _RunOptions(positionals[0], number, host, reload)


def run(args: Sequence[str]) -> int:
    """``ferromcp run TARGET [--http PORT] [--host ADDR] [--reload]``: serves
    the :class:`ferromcp.Server` that ``TARGET`` defines (see
    :func:`find_server`) over stdio, or Streamable HTTP at
    ``http://ADDR:PORT/mcp`` with ``--http``, until stdin ends, SIGTERM or
    Ctrl-C; returns the exit status. On stdio, stdout carries only MCP:
    what the file prints (also while it is imported) goes to stderr, as do
    the logs.

    ``--reload`` puts the command line's ``proxy`` in front of a child
    process serving ``TARGET``, restarted whenever a file in ``TARGET``'s
    folder changes: the client keeps its connection across restarts and is
    told the lists changed.

    >>> run(["--help"])  # doctest: +ELLIPSIS
    Serve the ferromcp.Server a Python file or module defines
    ...
    0
    """
    try:
        options = _parse_run(args)
    except _UsageError as e:
        sys.stderr.write(
            f"error: {e}\n\nUsage: ferromcp run [OPTIONS] <FILE[:NAME] | MODULE:NAME>\n\n"
            "For more information, try 'ferromcp run --help'.\n"
        )
        return 2
    if options is None:
        _write_stdout(RUN_USAGE)
        return 0
    target = _Target.parse(options.target)
    if target.file is not None and not target.file.is_file():
        sys.stderr.write(f"ferromcp run: no such file: {target.file}\n")
        return 1
    if options.reload:
        return _run_reloading(options, target)
    return _serve(options, target)


@dataclass(frozen=True)
class _Target:
    """What ``run`` serves: a file or a module, and the Server's name in it."""

    file: Path | None
    module: str | None
    name: str | None

    @staticmethod
    def parse(target: str) -> _Target:
        """``FILE``, ``FILE:NAME``, ``MODULE`` or ``MODULE:NAME``. A ``:`` is
        the name's only when what follows it is a (dotted) identifier, so
        Windows paths (``C:\\dir\\server.py``) stay paths; a target ending
        in ``.py``, with a path separator or naming an existing file is a
        file, anything else a module.

        >>> _Target.parse("server.py:mcp").name
        'mcp'
        >>> _Target.parse("app.tools:server")
        _Target(file=None, module='app.tools', name='server')
        """
        head, sep, tail = target.rpartition(":")
        named = bool(sep) and bool(head) and all(part.isidentifier() for part in tail.split("."))
        source, name = (head, tail) if named else (target, None)
        if source.endswith((".py", ".pyw")) or os.sep in source or "/" in source or Path(source).is_file():
            return _Target(Path(source), None, name)
        return _Target(None, source, name)

    def shown(self) -> str:
        """The file or module, as messages name it."""
        return str(self.file) if self.file is not None else str(self.module)

    def absolute(self) -> str:
        """The target for a child process, whatever its folder."""
        source = str(self.file.resolve()) if self.file is not None else str(self.module)
        return source if self.name is None else f"{source}:{self.name}"


def _run_reloading(options: _RunOptions, target: _Target) -> int:
    """The command line's ``proxy --reload``, in front of ``ferromcp run``
    of the same target in a child process."""
    watched = target.file.resolve().parent if target.file is not None else _module_root(str(target.module))
    host = options.host or "127.0.0.1"
    serve = ["--stdio"] if options.port is None else ["--http", str(options.port), "--host", host]
    child = [sys.executable, "-m", "ferromcp", "run", target.absolute()]
    return _command_line(["ferromcp", "proxy", *serve, "--reload", str(watched), "--", *child])


def _module_root(module: str) -> Path:
    """What ``--reload`` watches for a module target: its top-level
    package's folder, or the module's file (found without importing it)."""
    _put_first_on_path(os.getcwd())
    spec = importlib.util.find_spec(module.split(".", 1)[0])
    if spec is None:
        return Path.cwd()
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    if spec.origin and spec.has_location:
        return Path(spec.origin)
    return Path.cwd()


def _put_first_on_path(folder: str) -> None:
    """``folder`` first on ``sys.path``, as ``python FILE`` and ``python -m``
    put theirs (and left there: the module served may import its
    neighbours later)."""
    if folder in sys.path:
        sys.path.remove(folder)
    sys.path.insert(0, folder)


class _FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles the served file from its source every time: its cached
    bytecode is valid while the file's modification time (in whole
    seconds) and size are unchanged, so with ``--reload`` an edit of the
    same size saved within a second of the previous start would be served
    stale."""

    def get_code(self, fullname: str) -> CodeType:
        source = self.get_data(self.path)
        return compile(source, self.path, "exec", dont_inherit=True)


def _import_file(path: Path) -> ModuleType:
    """Imports ``path`` as a module named after it (not ``__main__``: its
    ``if __name__ == "__main__":`` block does not run), its folder first
    on ``sys.path``."""
    path = path.resolve()
    stem = path.stem
    name = stem if stem.isidentifier() and stem not in sys.modules else f"_ferromcp_run_{abs(hash(str(path)))}"
    _put_first_on_path(str(path.parent))
    loader = _FreshSourceLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    if spec is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _describe(value: object) -> str:
    if isinstance(value, ModuleType):
        return "module"
    if isinstance(value, type):
        return "class"
    if callable(value):
        return "function"
    return type(value).__name__


def _own(module: ModuleType, name: str, value: object) -> bool:
    """Whether ``name`` is worth naming among what ``module`` defines: not
    private, not an imported module, function or class, not a
    ``from __future__`` feature."""
    if name.startswith("_") or isinstance(value, ModuleType) or type(value).__module__ == "__future__":
        return False
    defined_in = getattr(value, "__module__", None) if isinstance(value, type) or callable(value) else None
    return defined_in is None or defined_in == module.__name__


def find_server(module: ModuleType, name: str | None, shown: str) -> Server:
    """The :class:`ferromcp.Server` ``ferromcp run`` serves from ``module``:
    its attribute ``name`` (dotted names allowed) when given, else its
    attribute ``server``, ``mcp`` or ``app`` that is a Server, else the only
    Server among its attributes. Raises :class:`NoServerError` naming what
    it found otherwise (``shown`` names the module in the message).

    >>> import types, ferromcp
    >>> module = types.ModuleType("tools")
    >>> module.mcp = ferromcp.Server("tools")
    >>> find_server(module, None, "tools.py").name
    'tools'
    >>> module.other = ferromcp.Server("other")
    >>> find_server(module, "other", "tools.py").name
    'other'
    """
    if name is not None:
        value: object = module
        for part in name.split("."):
            if not hasattr(value, part):
                raise NoServerError(f"{shown} has no attribute {name!r}")
            value = getattr(value, part)
        if not isinstance(value, Server):
            raise NoServerError(f"{shown}:{name} is a {_describe(value)}, not a ferromcp.Server")
        return value
    attributes = {k: v for k, v in vars(module).items() if not k.startswith("__")}
    for conventional in _CONVENTIONAL_NAMES:
        candidate = attributes.get(conventional)
        if isinstance(candidate, Server):
            return candidate
    servers = [(k, v) for k, v in attributes.items() if isinstance(v, Server)]
    distinct = {id(v) for _, v in servers}
    if len(distinct) == 1:
        return servers[0][1]
    if servers:
        names = ", ".join(k for k, _ in servers)
        raise NoServerError(
            f"{shown} defines several Servers ({names}): name the one to serve, "
            f"e.g. `ferromcp run {shown}:{servers[0][0]}`, or call it `server`"
        )
    public = [f"{k} ({_describe(v)})" for k, v in attributes.items() if _own(module, k, v)]
    found = "it defines nothing" if not public else "it defines: " + ", ".join(public[:20])
    if len(public) > 20:
        found += f" and {len(public) - 20} more"
    raise NoServerError(
        f"{shown} defines no ferromcp.Server ({found}); "
        'define one at module level, e.g. `server = ferromcp.Server("name")`'
    )


def _log_to_stderr() -> None:
    """Records of ``logging`` to stderr, unless the program set up logging.
    With ``RUST_LOG`` set, it alone chooses which of core's events show, as
    for the binary (``RUST_LOG=debug ferromcp tools ...``)."""
    if logging.getLogger().handlers:
        return
    logging.basicConfig(stream=sys.stderr, format="%(name)s: %(levelname)s: %(message)s")
    if os.environ.get("RUST_LOG"):
        logging.getLogger("ferromcp").setLevel(1)  # every record RUST_LOG let through


def _load(target: _Target) -> ModuleType:
    if target.file is not None:
        return _import_file(target.file)
    _put_first_on_path(os.getcwd())
    return importlib.import_module(str(target.module))


def _serve(options: _RunOptions, target: _Target) -> int:
    stdio = options.port is None
    try:
        # On stdio, stdout is the protocol: prints while importing go to stderr.
        with contextlib.redirect_stdout(sys.stderr) if stdio else contextlib.nullcontext():
            server = find_server(_load(target), target.name, target.shown())
    except NoServerError as e:
        sys.stderr.write(f"ferromcp run: {e}\n")
        return 1
    except (Exception, SystemExit):
        sys.stderr.write(f"ferromcp run: cannot load {target.shown()}:\n")
        traceback.print_exc()
        return 1
    _log_to_stderr()
    try:
        if stdio:
            server.run()
        else:
            host = options.host or "127.0.0.1"
            port = options.port if options.port is not None else 8000
            if port:
                shown_host = f"[{host}]" if ":" in host else host
                sys.stderr.write(f"ferromcp run: serving {server.name} at http://{shown_host}:{port}/mcp\n")
            server.run("http", host=host, port=port)
    except Exception as e:
        sys.stderr.write(f"ferromcp run: {e}\n")
        return 1
    return 0
