"""Showing a model's answer as it arrives: text on stdout, the rest on stderr.

Everything here is untrusted (the model's text and reasoning, tool names,
arguments and results): on a terminal it is escaped chunk by chunk
(``UntrustedStream``), or escaped then rendered as Markdown as it arrives
(``MarkdownStream``: blocks as they complete, code lines one by one); names on
a line of their own are one-line fields.

Where ``Output.animates`` (stdout and stderr on a terminal with colours), a
spinner on stderr shows that something is going on: until the first delta,
while Markdown that is not shown yet is arriving, and while a tool runs.  It
is erased before anything else is written.
"""

from __future__ import annotations

import json
import threading

from gitstore import PROPOSE_COMPACTION, Event, faults
from porcelain.app.query.mcp_tools import shown_wire
from porcelain.models.base import DeltaKind
from porcelain.render.mdstream import MarkdownStream
from porcelain.render.output import (
    Output,
    Spinner,
    UntrustedStream,
    escape_untrusted,
    untrusted_field,
)

RECEIVING = "receiving the answer"


class TerminalView:
    """Receives deltas; keeps a spinner up while nothing new can be shown."""

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
        self._spin(label)

    def _spin(self, label: str) -> None:
        self._settle()
        self.spinner = self.output.start_spinner(label)

    def _settle(self) -> None:
        if self.spinner is not None:
            self.spinner.stop()
            self.spinner = None

    def __call__(self, kind: DeltaKind, text: str) -> None:
        faults.point("model:streaming")
        with self._lock:
            if self.quiet:
                self._settle()
                return
            if kind == "reasoning":
                self._settle()
                if self.mode != "reasoning":
                    self._end_text()
                    self.output.write_err("\n[reasoning] " if self.mode else "[reasoning] ")
                self.output.write_err(self._reasoning.feed(text))
            elif kind == "text":
                self._text_delta(text)
            elif kind == "note":  # a remark to the person, no part of the answer
                self._end_text()
                self.output.write_err(text)
            self.mode = kind

    def _text_delta(self, text: str) -> None:
        if self.mode == "reasoning":
            self._settle()
            self.output.write_err(self._reasoning.flush() + "\n")
        shown = self._text.feed(text)
        if shown:
            self._settle()
            self.output.write_styled(shown)
            self.open_line = not shown.endswith("\n")
        elif isinstance(self._text, MarkdownStream) and self._text.holding:
            if self.spinner is None or self.spinner.label != RECEIVING:
                self._spin(RECEIVING)
        else:
            self._settle()

    def _end_text(self, cut: bool = False) -> None:
        held = self._text.flush(cut) if isinstance(self._text, MarkdownStream) else self._text.flush()
        if held:
            self.output.write_styled(held)
            self.open_line = not held.endswith("\n")

    def finish(self, cut: bool = False) -> None:
        """The answer ended (``cut``: it broke off, by Ctrl-C or a stream that failed)."""
        with self._lock:
            self._settle()
            if not self.quiet:
                self._end_text(cut)
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
        name = untrusted_field(shown_wire(event.get("name")))
        self.output.note(f"[tool] {name} {untrusted_field(args)}")
        shown = escape_untrusted(name, one_line=True)
        self._spin(f"running {shown if len(shown) <= 40 else shown[:37] + '...'}")

    def tool_result(self, name: str, content: str, is_error: bool) -> None:
        if self.quiet:
            return
        self._settle()
        if name == PROPOSE_COMPACTION:
            self.output.note(f"[{'error' if is_error else 'recorded'}] {content.strip()}")
            return
        first = content.strip().splitlines()[0] if content.strip() else "(no output)"
        if len(first) > 200:
            first = first[:197] + "..."
        label = "error" if is_error else "result"
        self.output.note(f"[{label}] {untrusted_field(shown_wire(name))}: {untrusted_field(first)}")
