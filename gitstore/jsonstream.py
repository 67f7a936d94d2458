"""A JSON array read one element at a time, from a bounded buffer.

An ``events.json`` of a million events is a few hundred megabytes; parsed
whole, it sits in memory three times over (bytes, text, values).  Here the
bytes are read ``chunk`` at a time, decoded as strict UTF-8 incrementally,
and each element is parsed with the same strict decoder and checks as
``boundary.load_json`` as soon as it is complete, so the buffer holds at
most one element and one read ahead.

Anything this parser does not take as a plain, well-formed array (a
byte-order mark, another top-level value, broken UTF-8 or JSON, too deep a
nesting, a lone surrogate escape, text after the ``]``) raises
``NotStreamable``: the caller then reads the file whole with ``load_json``,
which names the fault exactly as it always has.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gitstore.boundary import open_regular, size_text
from gitstore.errors import Refused
from gitstore.values import _STRICT, MAX_DEPTH, SURROGATE_ESCAPE, check_value

CHUNK = 1 << 20  # bytes read at a time
_WS = " \t\n\r"


class NotStreamable(ValueError):
    """The bytes are not a well-formed JSON array; read them whole for the reason."""


class _Buffer:
    """Decoded text not yet parsed, refilled from ``read`` on demand."""

    def __init__(self, read: Callable[[int], bytes], chunk: int) -> None:
        self.read = read
        self.chunk = chunk
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.text = ""
        self.pos = 0
        self.eof = False
        self.started = False

    def more(self) -> bool:
        """Read on (at least as much as is pending, so a long element costs linear
        time); False at the end of the input."""
        if self.eof:
            return False
        pending = self.text[self.pos :]
        raw = self.read(max(self.chunk, len(pending)))
        self.eof = not raw
        try:
            new = self.decoder.decode(raw, final=self.eof)
        except UnicodeDecodeError:
            raise NotStreamable("not UTF-8 text") from None
        if not self.started and new:
            self.started = True
            if new.startswith("\ufeff"):
                raise NotStreamable("starts with a byte-order mark")
        self.text, self.pos = pending + new, 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ("" at the end)."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _WS:
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.more():
                return ""

    def value(self) -> Any:
        """The next element, once the character after it (``,`` or ``]``) is read."""
        while True:
            self.peek()
            try:
                value, end = _STRICT.raw_decode(self.text, self.pos)
            except json.JSONDecodeError:
                if self.more():
                    continue  # cut off by the buffer's end, or broken: read on to know
                raise NotStreamable("invalid JSON") from None
            except (ValueError, RecursionError):  # NaN, a number too large, too deep
                raise NotStreamable("invalid JSON value") from None
            after = end
            while after < len(self.text) and self.text[after] in _WS:
                after += 1
            if after == len(self.text) and self.more():
                continue  # a number may go on in the next read: parse it again
            deep = SURROGATE_ESCAPE.search(self.text, self.pos, end) is not None
            try:  # as an element: one level down; fewer containers cannot nest too deep
                if deep or self._containers(end) >= MAX_DEPTH:
                    check_value([value], deep=deep)
            except ValueError:
                raise NotStreamable("invalid JSON value") from None
            self.pos = end
            return value

    def _containers(self, end: int) -> int:
        """At most how many objects and arrays the element before ``end`` holds (its
        brackets, counted in strings too), as ``load_json`` counts a whole text's."""
        return self.text.count("{", self.pos, end) + self.text.count("[", self.pos, end)


def iter_array(read: Callable[[int], bytes], chunk: int = CHUNK) -> Iterator[Any]:
    """The elements of the JSON array that ``read(n)`` serves (``b""`` at its end)."""
    buf = _Buffer(read, chunk)
    if buf.peek() != "[":
        raise NotStreamable("not a JSON array")
    buf.pos += 1
    if buf.peek() == "]":
        buf.pos += 1
    else:
        while True:
            yield buf.value()
            sep = buf.peek()
            buf.pos += 1
            if sep == "]":
                break
            if sep != ",":
                raise NotStreamable("invalid JSON")
    if buf.peek() != "":
        raise NotStreamable("text after the array")


def stream_array(
    path: Path, max_bytes: int, on_read: Callable[[bytes], None] | None = None
) -> Iterator[Any]:
    """``iter_array`` over a regular file of at most ``max_bytes`` (``open_regular``'s
    rules; ``Refused`` if it grows past them while read); ``on_read(block)`` after
    each read, with the bytes read."""
    fd = open_regular(path, max_bytes)
    total = 0

    def read(n: int) -> bytes:
        nonlocal total
        data = os.read(fd, min(n, max_bytes + 1 - total))
        total += len(data)
        if total > max_bytes:
            raise Refused(str(path), f"is over {size_text(max_bytes)}")
        if on_read:
            on_read(data)
        return data

    try:
        yield from iter_array(read, CHUNK)
    finally:
        os.close(fd)


__all__ = ["CHUNK", "NotStreamable", "iter_array", "stream_array"]
