"""The one writer to stdout and stderr: text or JSON, progress, prompts."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


class Output:
    def __init__(self, fmt: str = "text", out: TextIO | None = None, err: TextIO | None = None):
        self.format = fmt
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    @property
    def json(self) -> bool:
        return self.format == "json"

    def line(self, text: str = "") -> None:
        """A line of the command's result (stdout)."""
        print(text, file=self.out, flush=True)

    def lines(self, texts: list[str]) -> None:
        """Many lines of the result at once: one write and one flush, not one per line."""
        if texts:
            self.out.write("\n".join(texts) + "\n")
            self.out.flush()

    def write(self, text: str) -> None:
        """Streamed text, no newline added."""
        self.out.write(text)
        self.out.flush()

    def note(self, text: str) -> None:
        """Something for the person, not for a script (stderr)."""
        print(text, file=self.err, flush=True)

    def data(self, value: Any) -> None:
        print(json.dumps(value, indent=2, ensure_ascii=False), file=self.out, flush=True)

    def error(self, message: str, hint: str | None = None) -> None:
        print(f"error: {message}", file=self.err, flush=True)
        if hint:
            print(hint, file=self.err, flush=True)

    def is_terminal(self) -> bool:
        return bool(getattr(self.err, "isatty", lambda: False)())

    def confirm(self, question: str, stdin: TextIO | None = None) -> bool:
        """Ask on stderr, read one line from stdin; anything but y/yes is no."""
        source = stdin or sys.stdin
        self.err.write(f"{question} [y/n] ")
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


def elapsed(start: float) -> str:
    return f"{time.monotonic() - start:.1f}s"
