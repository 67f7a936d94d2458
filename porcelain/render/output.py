"""The one writer to stdout and stderr: text or JSON, progress, prompts.

Text jp did not write itself (titles, labels, ids from remotes, messages,
model answers, reasoning, tool output, tool names, error texts that quote
them) is untrusted: it must never drive the terminal.  Every text method of
``Output`` passes what it prints through ``escape_untrusted`` when its stream
is a terminal, so no control character (C0 but newline and tab, DEL, C1:
ESC, BEL, CSI...) reaches one raw; piped text stays byte-exact.  Fields that
a table or a header shows on one line go through ``untrusted_field`` first,
terminal or not, so that a newline in a title never fakes a row.  JSON stays
exact JSON (DEL and C1 written as ``\\u`` escapes, which JSON decodes back).

The visible form of an escaped character is a backslash escape: ``\\n``,
``\\r``, ``\\t`` for newline, carriage return and tab, ``\\xHH`` for any other
character below U+0100 (``\\x1b`` for ESC, ``\\x07`` for BEL, ``\\x9b`` for
CSI), ``\\uHHHH`` for the line and paragraph separators.  A CR directly
followed by a newline (a Windows line end) is harmless and passes.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

# on a terminal: C0 but newline and tab, DEL, C1; a CR only when no newline follows
_CONTROL = re.compile("\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# in a one-line field: every control character, and what splits or spaces a line
_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# what a one-line field never holds raw, terminal or not
_LINE_BREAKS = re.compile("[\n\r\t\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# JSON leaves DEL and C1 raw; as \\u escapes they decode to the same text
_JSON_RAW = re.compile("[\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    found = match.group()
    if found == "\r\n":
        return found
    if found in _NAMED:
        return _NAMED[found]
    code = ord(found)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_untrusted(text: str, *, one_line: bool = False) -> str:
    """Untrusted ``text`` made safe for a terminal: each control character in a
    visible form (see the module's docstring); newline and tab stay unless
    ``one_line``.  Text without one comes back as it is."""
    pattern = _ONE_LINE if one_line else _CONTROL
    return pattern.sub(_visible, text) if pattern.search(text) else text


def untrusted_field(text: object) -> str:
    """Untrusted text for one line of a table or a header, terminal or not: no raw
    newline, carriage return, tab or line separator (the rest is the stream's
    business: ``Output`` escapes it on a terminal)."""
    shown = str(text)
    return _LINE_BREAKS.sub(_visible, shown) if _LINE_BREAKS.search(shown) else shown


class UntrustedStream:
    """``escape_untrusted`` for text that arrives in chunks (a model's answer).

    Characters are escaped one by one, so an escape sequence split across
    chunks is escaped as a whole one is; a CR that ends a chunk waits for the
    next, to tell a Windows line end from a bare CR.
    """

    def __init__(self, terminal: bool) -> None:
        self.terminal = terminal
        self._held = ""

    def feed(self, chunk: str) -> str:
        if not self.terminal:
            return chunk
        text, self._held = self._held + chunk, ""
        if text.endswith("\r"):
            text, self._held = text[:-1], "\r"
        return escape_untrusted(text)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return escape_untrusted(held)


def _tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


class Output:
    def __init__(self, fmt: str = "text", out: TextIO | None = None, err: TextIO | None = None):
        self.format = fmt
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._terminals: tuple[bool, bool] | None = None

    @property
    def json(self) -> bool:
        return self.format == "json"

    def _on_terminal(self, err: bool) -> bool:
        if self._terminals is None:
            self._terminals = (_tty(self.out), _tty(self.err))
        return self._terminals[1 if err else 0]

    def shown(self, text: str, err: bool = False) -> str:
        """``text`` as this stream may show it: escaped on a terminal (every text
        method calls this; text jp wrote itself holds no control character)."""
        return escape_untrusted(text) if self._on_terminal(err) else text

    def untrusted_stream(self, err: bool = False) -> UntrustedStream:
        """An escaper for chunks of untrusted text bound for stdout (or stderr)."""
        return UntrustedStream(self._on_terminal(err))

    def line(self, text: str = "") -> None:
        """A line of the command's result (stdout)."""
        print(self.shown(text), file=self.out, flush=True)

    def lines(self, texts: list[str]) -> None:
        """Many lines of the result at once: one write and one flush, not one per line."""
        if texts:
            self.out.write(self.shown("\n".join(texts) + "\n"))
            self.out.flush()

    def write(self, text: str) -> None:
        """Streamed text, no newline added."""
        self.out.write(self.shown(text))
        self.out.flush()

    def write_err(self, text: str) -> None:
        """Streamed text on stderr (reasoning as it arrives), no newline added."""
        self.err.write(self.shown(text, err=True))
        self.err.flush()

    def note(self, text: str) -> None:
        """Something for the person, not for a script (stderr)."""
        print(self.shown(text, err=True), file=self.err, flush=True)

    def data(self, value: Any) -> None:
        text = json.dumps(value, indent=2, ensure_ascii=False)
        if _JSON_RAW.search(text):
            text = _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        print(text, file=self.out, flush=True)

    def error(self, message: str, hint: str | None = None) -> None:
        print(self.shown(f"error: {message}", err=True), file=self.err, flush=True)
        if hint:
            print(self.shown(hint, err=True), file=self.err, flush=True)

    def is_terminal(self) -> bool:
        return self._on_terminal(err=True)

    def confirm(self, question: str, stdin: TextIO | None = None) -> bool:
        """Ask on stderr, read one line from stdin; anything but y/yes is no."""
        source = stdin or sys.stdin
        self.err.write(self.shown(f"{question} [y/n] ", err=True))
        self.err.flush()
        try:
            answer = source.readline()
        except (OSError, ValueError):
            answer = ""
        interactive = bool(getattr(source, "isatty", lambda: False)())
        if not interactive or not answer.endswith("\n"):
            self.err.write("\n")
            self.err.flush()
        return answer.strip().lower() in ("y", "yes")

    @contextmanager
    def spinner(self, label: str) -> Iterator[Spinner]:
        """A spinner on stderr while nothing has arrived yet (terminals only)."""
        spin = Spinner(self.err, label, enabled=self.is_terminal())
        spin.start()
        try:
            yield spin
        finally:
            spin.stop()


class Spinner:
    FRAMES = "|/-\\"

    def __init__(self, stream: TextIO, label: str, enabled: bool) -> None:
        self.stream = stream
        self.label = label
        self.enabled = enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if not self.enabled:
            return
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        i = 0
        while not self._stop.wait(0.1):
            self.stream.write(f"\r{self.FRAMES[i % 4]} {self.label}")
            self.stream.flush()
            i += 1

    def stop(self) -> None:
        if self._thread is None or self._stop.is_set():
            self._stop.set()
            return
        self._stop.set()
        self._thread.join()
        self.stream.write("\r" + " " * (len(self.label) + 2) + "\r")
        self.stream.flush()
