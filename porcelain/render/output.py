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
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from porcelain.domain.escaping import JSON_RAW
from porcelain.domain.escaping import escape_untrusted as escape_untrusted
from porcelain.domain.escaping import untrusted_field as untrusted_field

Text = str | Sequence[str] | Callable[[], None] | None
"""The text form of a result (``Output.emit``)."""


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


_RUNNING: list[Spinner] = []  # the spinner on the terminal, at most one


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

    def colours(self) -> bool:
        """Whether stdout is a terminal that takes colours (no NO_COLOR, TERM not dumb)."""
        term = os.environ.get("TERM", "")
        return self._on_terminal(False) and not os.environ.get("NO_COLOR") and term != "dumb"

    def animates(self) -> bool:
        """Whether a spinner may show: stdout and stderr on a terminal that takes
        colours (never when stdout is piped, with NO_COLOR or TERM=dumb)."""
        return self.colours() and self._on_terminal(True)

    def start_spinner(self, label: str) -> Spinner:
        """A spinner on stderr (where ``animates``), the one running in the process:
        a prompt (``confirm``, ``ask``), a note or an error stops it first, whichever
        ``Output`` writes it (``cli.main`` reports errors through its own)."""
        self.stop_spinner()
        spinner = Spinner(self.err, label, enabled=self.animates())
        _RUNNING.append(spinner)
        spinner.start()
        return spinner

    def stop_spinner(self) -> None:
        """Erase the running spinner, if one runs."""
        while _RUNNING:
            _RUNNING.pop().stop()

    def styled_lines(self, texts: list[str]) -> None:
        """Lines holding jp's own styling, whose untrusted parts the caller escaped
        (`escape_untrusted`): written as they are."""
        if texts:
            self.out.write("\n".join(texts) + "\n")
            self.out.flush()

    def write(self, text: str) -> None:
        """Streamed text, no newline added."""
        self.out.write(self.shown(text))
        self.out.flush()

    def write_styled(self, text: str) -> None:
        """Streamed text already escaped by its producer (``UntrustedStream``,
        ``MarkdownStream``), which may hold jp's own styles: written as it is."""
        if text:
            self.out.write(text)
            self.out.flush()

    def write_err(self, text: str) -> None:
        """Streamed text on stderr (reasoning as it arrives), no newline added."""
        self.err.write(self.shown(text, err=True))
        self.err.flush()

    def note(self, text: str) -> None:
        """Something for the person, not for a script (stderr)."""
        self.stop_spinner()
        print(self.shown(text, err=True), file=self.err, flush=True)

    def data(self, value: Any) -> None:
        text = json.dumps(value, indent=2, ensure_ascii=False)
        if JSON_RAW.search(text):
            text = JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        print(text, file=self.out, flush=True)

    # -- a command's result, in the format asked for (-F) ------------------------

    def emit(self, value: Any, text: Text = None) -> None:
        """A command's result: ``value`` as JSON with ``-F json``, else ``text``
        (a line, lines, or a function that writes them; None writes nothing)."""
        if self.json:
            self.data(value)
        else:
            self.text(text)

    def emit_json(self, value: Any) -> bool:
        """With ``-F json``, write ``value`` as the result and say so (True); else
        False, and the caller writes the text result."""
        if self.json:
            self.data(value)
        return self.json

    def text(self, text: Text) -> None:
        """Part of the text result that the JSON result carries in its value
        (written by ``emit`` at the end): nothing with ``-F json``."""
        if self.json:
            return
        if callable(text):
            text()
        elif isinstance(text, str):
            self.line(text)
        elif text is not None:
            self.lines(list(text))

    def say(self, text: str) -> None:
        """A line of the result in text; beside JSON a note, so stdout stays JSON."""
        if self.json:
            self.note(text)
        else:
            self.line(text)

    def error(self, message: str, hint: str | None = None) -> None:
        self.stop_spinner()
        print(self.shown(f"error: {message}", err=True), file=self.err, flush=True)
        if hint:
            print(self.shown(hint, err=True), file=self.err, flush=True)

    def is_terminal(self) -> bool:
        return self._on_terminal(err=True)

    def confirm(self, question: str, stdin: TextIO | None = None) -> bool | None:
        """Ask on stderr, read one line from stdin: True for y/yes; False for n/no, and on
        a terminal for Enter or any other answer; None when nobody answered (nothing to
        read, or off a terminal a line that is neither yes nor no).  `App.confirm` holds
        the rule every command's confirmation follows."""
        self.stop_spinner()
        source = stdin or sys.stdin
        self.err.write(self.shown(f"{question} [y/N] ", err=True))
        self.err.flush()
        try:
            answer = source.readline()
        except (OSError, ValueError):
            answer = ""
        interactive = bool(getattr(source, "isatty", lambda: False)())
        if not interactive or not answer.endswith("\n"):
            self.err.write("\n")
            self.err.flush()
        word = answer.strip().lower()
        if word in ("y", "yes"):
            return True
        if word in ("n", "no") or (interactive and answer.endswith("\n")):
            return False
        return None

    def ask(self, question: str, stdin: TextIO | None = None) -> str:
        """Ask on stderr, read one line from stdin: the answer without its line end
        (empty when nothing was typed or nothing could be read)."""
        self.stop_spinner()
        source = stdin or sys.stdin
        self.err.write(self.shown(f"{question} ", err=True))
        self.err.flush()
        try:
            answer = source.readline()
        except (OSError, ValueError):
            answer = ""
        if not answer.endswith("\n"):
            self.err.write("\n")
            self.err.flush()
        return answer.strip()

    @contextmanager
    def spinner(self, label: str) -> Iterator[Spinner]:
        """A spinner on stderr while nothing has arrived yet (``animates`` only)."""
        spin = self.start_spinner(label)
        try:
            yield spin
        finally:
            spin.stop()


class Spinner:
    """``|/-\\`` and a label on one line of stderr, redrawn every tenth of a second
    until ``stop``, which erases it (a spinner that never drew writes nothing).
    The label is jp's own text (a tool's name in it is escaped by the caller)."""

    FRAMES = "|/-\\"

    def __init__(self, stream: TextIO, label: str, enabled: bool) -> None:
        self.stream = stream
        import shutil  # lazy: only a spinner measures the terminal (start-up: shutil loads bz2, lzma)

        columns = shutil.get_terminal_size((80, 24)).columns
        self.label = label if len(label) + 3 <= columns else label[: max(0, columns - 6)] + "..."
        self.enabled = enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False

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
            self._drawn = True
            i += 1

    def stop(self) -> None:
        if self._thread is None or self._stop.is_set():
            self._stop.set()
            return
        self._stop.set()
        self._thread.join()
        if self._drawn:
            self.stream.write("\r" + " " * (len(self.label) + 2) + "\r")
            self.stream.flush()
