"""A server's stdout with a bound on each line, so a result is cut as it is read.

The ``mcp`` package reads a server's stdout line by line, each line a JSON-RPC
message, and parses a line only once it is whole: a server that writes a
result of a gigabyte would cost jp a gigabyte and more.  ``CappedLines`` sits
under the package's reader (``mcp_client`` puts it on each server's stdout) and
holds at most ``MAX_LINE`` bytes of a line.  A longer line is cut there: the
rest is read and thrown away up to its newline, and in its place the reader
gets a response to the same request whose text is what the cut part said,
marked as cut.  A line too broken to answer (no request id in its first part)
ends the stream: the server's calls then fail as a closed connection does.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_LINE = 4 * 1024 * 1024  # bytes of one message
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')
_TEXT = re.compile(rb'"text"\s*:\s*"')
CUT_NOTE = "[jp: the result was over {limit} bytes; it was cut as it was read]"


def cut_response(head: bytes, limit: int = MAX_LINE) -> bytes | None:
    """A JSON-RPC response standing for a line cut to ``head``: its id, and the text
    its first text block held; None when ``head`` names no request."""
    found = _ID.search(head[:4096])
    if found is None or b'"result"' not in head[:4096] and b'"error"' not in head[:4096]:
        return None
    try:
        request = json.loads(found.group(1))
    except ValueError:
        return None
    text = ""
    start = _TEXT.search(head)
    if start is not None:
        text = _partial_string(head[start.end() :])
    note = CUT_NOTE.format(limit=limit)
    body = {
        "jsonrpc": "2.0",
        "id": request,
        "result": {"content": [{"type": "text", "text": f"{text}\n{note}"}], "isError": False},
    }
    return json.dumps(body).encode() + b"\n"


def _partial_string(raw: bytes) -> str:
    """The start of a JSON string's body (its opening quote already read), decoded
    as far as it is whole: a cut escape or character at its end is left out."""
    end = raw.find(b'"')
    while end > 0 and _escaped(raw, end):
        end = raw.find(b'"', end + 1)
    if end >= 0:
        raw = raw[:end]
    for trim in range(12):
        piece = raw[: len(raw) - trim] if trim else raw
        try:
            return str(json.loads(b'"' + piece + b'"'))
        except ValueError:
            continue
    return ""


def _escaped(raw: bytes, at: int) -> bool:
    slashes = 0
    while at - slashes - 1 >= 0 and raw[at - slashes - 1] == 0x5C:
        slashes += 1
    return slashes % 2 == 1


class CappedLines:
    """A byte stream (anyio's ``ByteReceiveStream`` protocol) whose lines are at most
    ``limit`` bytes; see the module's note."""

    def __init__(self, inner: Any, limit: int = MAX_LINE) -> None:
        self._inner = inner
        self._limit = limit
        self._line = bytearray()
        self._ready: list[bytes] = []
        self._dropping = False
        self._ended = False

    @property
    def extra_attributes(self) -> Any:
        return getattr(self._inner, "extra_attributes", {})

    def extra(self, attribute: Any, default: Any = None) -> Any:
        return self._inner.extra(attribute, default)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        import anyio  # lazy: anyio comes with the mcp package

        while not self._ready:
            if self._ended:
                raise anyio.EndOfStream
            try:
                data = await self._inner.receive(max_bytes)
            except anyio.EndOfStream:
                self._ended = True
                if self._line and not self._dropping:
                    self._ready.append(bytes(self._line))
                self._line.clear()
                continue
            self._take(data)
        return self._ready.pop(0)

    def _take(self, data: bytes) -> None:
        start = 0
        while start < len(data):
            newline = data.find(b"\n", start)
            end = len(data) if newline < 0 else newline
            if not self._dropping:
                self._line += data[start:end]
                if len(self._line) > self._limit:
                    self._cut()
            if newline < 0:
                return
            if not self._dropping:
                self._ready.append(bytes(self._line) + b"\n")
            self._line.clear()
            self._dropping = False
            start = newline + 1

    def _cut(self) -> None:
        standing = cut_response(bytes(self._line[: self._limit]), self._limit)
        self._line.clear()
        self._dropping = True
        if standing is None:
            self._ended = True  # nothing to answer with: the connection ends
        else:
            self._ready.append(standing)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> CappedLines:
        return self

    async def __anext__(self) -> bytes:
        import anyio  # lazy: as above

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
