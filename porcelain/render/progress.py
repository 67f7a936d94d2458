"""A progress line on stderr while a long read or write runs: terminals only, never
when piped."""

from __future__ import annotations

from collections.abc import Callable

from porcelain import clock
from porcelain.render.output import Output

PROGRESS_AFTER = 1.0  # seconds before the line appears
_EVERY = 0.1  # seconds between redraws


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB"


class ReadProgress:
    """``progress(entries, done, total)`` redraws ``WHAT: read N events (X of Y MiB) P%``;
    ``counting(VERB)`` gives ``show(done, total)`` for ``WHAT: VERB N of M events P%``
    (the write that follows the read); ``what`` and ``VERB`` are jp's own words
    (never a path or a title from outside)."""

    def __init__(self, output: Output, what: str) -> None:
        self.err = output.err
        self.what = what
        self.enabled = output.is_terminal()
        self.start = clock.monotonic()
        self.drawn = self.start
        self.shown = False

    def __call__(self, entries: int, done: int, total: int) -> None:
        if self._due():
            share = f" {done * 100 // total}%" if total else ""
            self._draw(f"read {entries:,} events ({_mib(done)} of {_mib(total)}){share}")

    def counting(self, verb: str, unit: str = "events") -> Callable[[int, int], None]:
        """A ``show(done, total)`` that redraws ``WHAT: VERB done of total UNIT P%``."""

        def show(done: int, total: int) -> None:
            if self._due():
                share = f" {done * 100 // total}%" if total else ""
                self._draw(f"{verb} {done:,} of {total:,} {unit}{share}")

        return show

    def _due(self) -> bool:
        now = clock.monotonic()
        if not self.enabled or now - self.start < PROGRESS_AFTER or now - self.drawn < _EVERY:
            return False
        self.drawn = now
        return True

    def _draw(self, text: str) -> None:
        self.err.write(f"\r{self.what}: {text}\033[K")
        self.err.flush()
        self.shown = True

    def stage(self, text: str) -> None:
        """A last line for the step after the read (only if the read showed one)."""
        if self.shown:
            self.err.write(f"\r{self.what}: {text}\033[K")
            self.err.flush()

    def clear(self) -> None:
        if self.shown:
            self.err.write("\r\033[K")
            self.err.flush()
            self.shown = False
