"""Showing a model's answer as it arrives: text on stdout, the rest on stderr.

Everything here is untrusted (the model's text and reasoning, tool names,
arguments and results): on a terminal it is escaped chunk by chunk
(``UntrustedStream``), or escaped then rendered block by block as Markdown
(``MarkdownStream``); names on a line of their own are one-line fields.
"""

from __future__ import annotations

import json
import threading

from gitstore import PROPOSE_COMPACTION, Event, fault_point
from porcelain.models.base import DeltaKind
from porcelain.render.markdown import MarkdownStream
from porcelain.render.output import Output, Spinner, UntrustedStream, untrusted_field


class StreamView:
    """Receives deltas; keeps a spinner up until the first one arrives."""

    def __init__(self, output: Output, quiet: bool = False, markdown: bool = False) -> None:
        self.output = output
        self.quiet = quiet or output.json
        self.spinner: Spinner | None = None
        self.mode: DeltaKind | None = None
        self.open_line = False  # answer text on stdout not yet ended by a newline
        self._lock = threading.Lock()
        self._text: UntrustedStream | MarkdownStream = (
            MarkdownStream() if markdown else output.untrusted_stream()
        )
        self._reasoning = output.untrusted_stream(err=True)

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
        fault_point("model:streaming")
        with self._lock:
            self._settle()
            if self.quiet:
                return
            if kind == "reasoning":
                if self.mode != "reasoning":
                    self._end_text()
                    self.output.write_err("\n[reasoning] " if self.mode else "[reasoning] ")
                self.output.write_err(self._reasoning.feed(text))
            elif kind == "text":
                if self.mode == "reasoning":
                    self.output.write_err(self._reasoning.flush() + "\n")
                shown = self._text.feed(text)
                self.output.write_styled(shown)
                if shown:
                    self.open_line = not shown.endswith("\n")
            elif kind == "note":  # a remark to the person, no part of the answer
                self._end_text()
                self.output.write_err(text)
            self.mode = kind

    def _end_text(self) -> None:
        held = self._text.flush()
        if held:
            self.output.write_styled(held)
            self.open_line = not held.endswith("\n")

    def finish(self) -> None:
        with self._lock:
            self._settle()
            if not self.quiet:
                self._end_text()
            if not self.quiet and self.open_line:
                self.output.write("\n")
                self.open_line = False
            if not self.quiet and self.mode == "reasoning":
                self.output.write_err(self._reasoning.flush() + "\n")
            self.mode = None

    def tool_call(self, event: Event) -> None:
        if self.quiet:
            return
        args = json.dumps(event.get("arguments", {}), ensure_ascii=False)
        if len(args) > 300:
            args = args[:297] + "..."
        self.output.note(f"[tool] {untrusted_field(event.get('name'))} {untrusted_field(args)}")

    def tool_result(self, name: str, content: str, is_error: bool) -> None:
        if self.quiet:
            return
        if name == PROPOSE_COMPACTION:
            self.output.note(f"[{'error' if is_error else 'recorded'}] {content.strip()}")
            return
        first = content.strip().splitlines()[0] if content.strip() else "(no output)"
        if len(first) > 200:
            first = first[:197] + "..."
        label = "error" if is_error else "result"
        self.output.note(f"[{label}] {untrusted_field(name)}: {untrusted_field(first)}")
