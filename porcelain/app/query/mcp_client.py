"""The MCP servers of one query: started over stdio, on an event loop of their own.

The ``mcp`` package's client is async (anyio).  A query is not, so the
servers it uses run on a blocking portal: an event loop on a thread that
``McpServers`` starts when the first server is needed and stops in
``close``, which the turn calls whatever happened.  Every wait is bounded on
both sides: inside the loop by ``anyio.fail_after`` (the startup timeout,
the call timeout) and here by a ``Future.result`` timeout a little longer,
so a server or a stuck loop can delay a query, never hang it.

Every process a server started is gone when the query ends: the ``mcp``
package starts each server in a session of its own (its process group is
its pid), but stops only the server itself when it exits on its stdin's
close, so its helpers would live on.  jp records each server's pid as it is
spawned (``_record_spawns``) and kills the whole group when the server stops,
and at once, without the package's graceful waits, when it did not start in
time (its start-up limit is what it costs).  Each server's stdout is read
through ``CappedLines`` (``mcp_stream.py``): a result is cut as it is read.

What a server says is untrusted: ``McpError`` messages and the results of
``call`` are plain text the caller escapes and bounds.  A server's stderr
goes to a temporary file, never to the terminal; its last line is what an
``McpError`` quotes when the server fails to start.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import os
import signal
import tempfile
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import IO, Any

from porcelain.app.query.mcp_stream import CappedLines

# beyond a wait's own timeout, how long the loop may take to report it
GRACE = 3.0
# how long stopping one server may take (the mcp package closes its stdin,
# waits 2 s, then SIGTERMs its process group and SIGKILLs it 2 s later)
STOP_WAIT = 8.0
STDERR_TAIL = 2000
# the pids of the servers spawned by the task that runs ``_serve`` (set there)
_SPAWNED: ContextVar[list[int] | None] = ContextVar("jp_mcp_spawned", default=None)


class McpError(Exception):
    """A server that could not start, or a call that failed: one line for the user."""


@dataclass(frozen=True)
class ServerSpec:
    """How to start one server (``[providers.mcp.NAME]`` of the user's own files)."""

    name: str
    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    startup_timeout: float
    call_timeout: float


@dataclass(frozen=True)
class Listed:
    """One tool as the server listed it (not yet checked: ``mcp_tools`` does that)."""

    name: Any
    description: Any
    schema: Any


@dataclass(frozen=True)
class CallResult:
    text: str
    is_error: bool


@dataclass
class _Running:
    session: Any
    stop: Any  # an anyio.Event, set from the loop's thread
    done: concurrent.futures.Future[Any]
    stderr: IO[bytes]
    groups: list[int] = field(default_factory=list)


@dataclass
class McpServers:
    """The servers one query started, by name; ``close`` stops them all."""

    _portal_cm: Any = None
    _portal: Any = None
    _running: dict[str, _Running] = field(default_factory=dict)

    def start(self, spec: ServerSpec) -> list[Listed]:
        """Start ``spec``'s server and list its tools; McpError when it cannot."""
        portal = self._loop()
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by _stop)
        ready: concurrent.futures.Future[tuple[Any, Any, list[Listed]]] = (
            concurrent.futures.Future()
        )
        groups: list[int] = []
        done = portal.start_task_soon(_serve, spec, stderr, ready, groups)
        try:
            session, stop, tools = ready.result(timeout=spec.startup_timeout + GRACE)
        except concurrent.futures.TimeoutError:
            _kill(groups)
            self._stop(_Running(None, None, done, stderr, groups))
            raise McpError(f"did not start within {spec.startup_timeout:g} s") from None
        except BaseException as exc:  # what the server did is data: one line
            tail = _tail(stderr)
            self._stop(_Running(None, None, done, stderr, groups))
            raise McpError(_startup_failure(exc, spec, tail)) from None
        self._running[spec.name] = _Running(session, stop, done, stderr, groups)
        return tools

    def call(self, server: str, tool: str, arguments: dict[str, Any], timeout: float) -> CallResult:
        """Call ``tool`` of the running ``server``; McpError when the call fails."""
        running = self._running.get(server)
        if running is None or running.done.done():
            raise McpError(f"the MCP server {server} is not running")
        future = self._portal.start_task_soon(_call, running.session, tool, arguments, timeout)
        try:
            result = future.result(timeout=timeout + GRACE)
        except (concurrent.futures.TimeoutError, TimeoutError):
            future.cancel()
            raise McpError(f"no answer within {timeout:g} s") from None
        except BaseException as exc:  # a crash, a closed connection, a protocol error
            raise McpError(_first_line(exc) or type(exc).__name__) from None
        return _result(result)

    def close(self) -> None:
        """Stop every server (its process group killed) and the loop; never raises."""
        for running in self._running.values():
            self._stop(running)
        self._running.clear()
        if self._portal_cm is not None:
            with contextlib.suppress(BaseException):
                self._portal.call(self._portal.stop, True)
            with contextlib.suppress(BaseException):
                self._portal_cm.__exit__(None, None, None)
            self._portal_cm = self._portal = None

    def _loop(self) -> Any:
        if self._portal is None:
            # lazy: anyio comes with the mcp package, loaded only for a configured server
            from anyio.from_thread import start_blocking_portal

            quiet = logging.getLogger("mcp")  # its logs would reach the terminal raw
            quiet.addHandler(logging.NullHandler())
            quiet.propagate = False
            self._portal_cm = start_blocking_portal()
            self._portal = self._portal_cm.__enter__()
        return self._portal

    def _stop(self, running: _Running) -> None:
        if running.stop is not None:
            with contextlib.suppress(BaseException):
                self._portal.call(running.stop.set)
        else:
            running.done.cancel()
        with contextlib.suppress(BaseException):
            running.done.result(timeout=STOP_WAIT)
        _kill(running.groups)  # whatever the server started and left behind
        running.stderr.close()


def _kill(groups: list[int]) -> None:
    """SIGKILL each process group in ``groups`` (a server's pid is its group's id)."""
    for group in groups:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)


def _record_spawns() -> None:
    """Wrap the ``mcp`` package's spawn so that each server's pid lands in the list
    ``_SPAWNED`` holds for the task that starts it (once; a package without that
    function leaves jp without the group kill, never without a server)."""
    # lazy: the mcp package is loaded only when a configured server is used
    from mcp.client import stdio

    spawn = getattr(stdio, "_create_platform_compatible_process", None)
    if spawn is None or getattr(spawn, "jp_records", False):
        return

    async def recorded(*args: Any, **kwargs: Any) -> Any:
        process = await spawn(*args, **kwargs)
        if getattr(process, "_stdout", None) is not None:  # each message bounded as read
            process._stdout = CappedLines(process._stdout)
        pids = _SPAWNED.get()
        if pids is not None and isinstance(getattr(process, "pid", None), int):
            pids.append(process.pid)
        return process

    recorded.jp_records = True  # type: ignore[attr-defined]
    stdio._create_platform_compatible_process = recorded


async def _serve(
    spec: ServerSpec,
    stderr: IO[bytes],
    ready: concurrent.futures.Future[tuple[Any, Any, list[Listed]]],
    groups: list[int],
) -> None:
    """Run one server until its stop event is set; ``ready`` gets its session and
    tools; ``groups`` its pid, whose process group is killed when it ends."""
    # lazy: the mcp package is loaded only when a configured server is used
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    _record_spawns()
    _SPAWNED.set(groups)
    params = StdioServerParameters(command=spec.command, args=list(spec.args), env=dict(spec.env))
    try:
        with open(stderr.fileno(), "w", closefd=False) as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                try:
                    with anyio.fail_after(spec.startup_timeout):
                        await session.initialize()
                        listed = await _list_tools(session)
                except BaseException as exc:  # said now, killed now: no graceful wait
                    if not ready.done():
                        ready.set_exception(exc)
                    _kill(groups)
                    raise
                stop = anyio.Event()
                ready.set_result((session, stop, listed))
                await stop.wait()
    except BaseException as exc:
        if not ready.done():
            ready.set_exception(exc)
        if not isinstance(exc, Exception):
            raise
    finally:
        _kill(groups)


async def _list_tools(session: Any) -> list[Listed]:
    out: list[Listed] = []
    cursor = None
    for _ in range(20):  # pages; a server that pages forever gets no more
        # lazy: the mcp package is loaded only when a configured server is used
        from mcp import types

        page = await session.list_tools(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
        )
        out += [Listed(t.name, t.description, t.input_schema) for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            break
    return out


async def _call(session: Any, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
    # lazy: anyio comes with the mcp package, loaded only for a configured server
    import anyio

    with anyio.fail_after(timeout):
        return await session.call_tool(tool, arguments)


def _result(result: Any) -> CallResult:
    """A tool's result as text: its text blocks, and a line for each other block."""
    parts: list[str] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(str(getattr(block, "text", "")))
        else:
            parts.append(f"[jp: a {str(kind)[:40]} block, not kept]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(str(structured))
    return CallResult("\n".join(parts), bool(getattr(result, "is_error", False)))


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


def _first_line(exc: BaseException) -> str:
    for leaf in _leaves(exc):
        text = str(leaf).strip()
        if text:
            return text.splitlines()[0][:300]
    return ""


def _startup_failure(exc: BaseException, spec: ServerSpec, tail: str) -> str:
    leaves = _leaves(exc)
    if any(isinstance(e, FileNotFoundError) for e in leaves):
        return f"command not found: {spec.command}"
    if any(isinstance(e, TimeoutError) for e in leaves):
        why = f"did not start within {spec.startup_timeout:g} s"
    else:
        why = _first_line(exc) or type(leaves[0]).__name__
    return f"{why}; its last words: {tail}" if tail else why


def _tail(stderr: IO[bytes]) -> str:
    """The last line the server wrote to its stderr (bounded)."""
    with contextlib.suppress(OSError):
        stderr.seek(0, 2)
        size = stderr.tell()
        stderr.seek(max(0, size - STDERR_TAIL))
        lines = stderr.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:300] if lines else ""
    return ""
