"""Showing a model's answer as it arrives: text on stdout, the rest on stderr."""

from __future__ import annotations

import json
import threading

from gitstore import faults
from gitstore.events import Event
from porcelain.models.base import DeltaKind
from porcelain.output import Output, Spinner


class StreamView:
    """Receives deltas; keeps a spinner up until the first one arrives."""

    def __init__(self, output: Output, quiet: bool = False) -> None:
        self.output = output
        self.quiet = quiet or output.json
        self.spinner: Spinner | None = None
        self.mode: DeltaKind | None = None
        self.open_line = False  # answer text on stdout not yet ended by a newline
        self._lock = threading.Lock()

    def waiting(self, label: str = "waiting for the model") -> None:
        if self.quiet:
            return
        self.spinner = Spinner(self.output.err, label, enabled=self.output.is_terminal())
        self.spinner.start()

    def _settle(self) -> None:
        if self.spinner is not None:
            self.spinner.stop()
            self.spinner = None

    def __call__(self, kind: DeltaKind, text: str) -> None:
        faults.point("model:streaming")
        with self._lock:
            self._settle()
            if self.quiet:
                return
            if kind == "reasoning":
                if self.mode != "reasoning":
                    self.output.err.write("\n[reasoning] " if self.mode else "[reasoning] ")
                self.output.err.write(text)
                self.output.err.flush()
            elif kind == "text":
                if self.mode == "reasoning":
                    self.output.err.write("\n")
                    self.output.err.flush()
                self.output.write(text)
                self.open_line = not text.endswith("\n")
            self.mode = kind

    def finish(self) -> None:
        with self._lock:
            self._settle()
            if not self.quiet and self.open_line:
                self.output.write("\n")
                self.open_line = False
            if not self.quiet and self.mode == "reasoning":
                self.output.err.write("\n")
            self.mode = None

    def tool_call(self, event: Event) -> None:
        if self.quiet:
            return
        args = json.dumps(event.get("arguments", {}), ensure_ascii=False)
        if len(args) > 300:
            args = args[:297] + "..."
        self.output.note(f"[tool] {event.get('name')} {args}")

    def tool_result(self, name: str, content: str, is_error: bool) -> None:
        if self.quiet:
            return
        if name == "propose_compaction":
            self.output.note(f"[{'error' if is_error else 'recorded'}] {content.strip()}")
            return
        first = content.strip().splitlines()[0] if content.strip() else "(no output)"
        if len(first) > 200:
            first = first[:197] + "..."
        self.output.note(f"[{'error' if is_error else 'result'}] {name}: {first}")
