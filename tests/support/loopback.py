"""What the two API fakes share: an HTTP server on 127.0.0.1 in a daemon thread,
a queue of scripted replies taken by the first whose ``when`` matches, and the
``when`` keys turned into a predicate."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Protocol, Self

Body = dict[str, Any]
Predicate = Callable[[Body], bool]
When = Mapping[str, Any] | Predicate | None
Check = Callable[[Body, Any], bool]


class Script(Protocol):
    match: Predicate
    times: int | None


def predicate(when: When, checks: Mapping[str, Check]) -> Predicate:
    """A script's ``when``: a function of the request body, or keys of ``checks``
    (each a test of the body against the key's value), all of which must hold."""
    if when is None:
        return lambda body: True
    if callable(when):
        return when
    unknown = set(when) - set(checks)
    if unknown:
        raise ValueError(f"unknown `when` keys: {sorted(unknown)} (known: {sorted(checks)})")
    keys = dict(when)
    return lambda body: all(checks[k](body, v) for k, v in keys.items())


class Loopback:
    """Use as a context manager: the server answers between enter and exit."""

    def __init__(self, handler: Callable[[Any], type[BaseHTTPRequestHandler]]) -> None:
        self._scripts: list[Any] = []
        self._lock = threading.Lock()
        self._ids = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def _add(self, script: Script) -> None:
        with self._lock:
            self._scripts.append(script)

    def pending(self) -> int:
        """Scripted replies not used yet (``times=None`` ones count once)."""
        with self._lock:
            return len(self._scripts)

    def _take(self, body: Body) -> Any:
        with self._lock:
            for i, script in enumerate(self._scripts):
                if script.match(body):
                    if script.times is not None:
                        script.times -= 1
                        if script.times <= 0:
                            del self._scripts[i]
                    return script
        return None

    def _next_id(self, prefix: str, digits: int = 24) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}{self._ids:0{digits}d}"
