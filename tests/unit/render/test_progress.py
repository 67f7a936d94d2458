"""The read progress line: on a terminal once a read takes a while, never when piped."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from porcelain import clock
from porcelain.render.output import Output
from porcelain.render.progress import ReadProgress


class Screen(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class Ticking:
    """A clock whose monotonic reading moves on a second each time it is read."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> datetime:
        return datetime(2026, 1, 5, tzinfo=UTC)

    def time(self) -> float:
        return 0.0

    def monotonic(self) -> float:
        self.t += 1.0
        return self.t

    def token(self, nbytes: int) -> str:
        return "0" * 2 * nbytes


@pytest.fixture(autouse=True)
def ticking() -> Iterator[None]:
    before = clock.current()
    clock.install(Ticking())
    yield
    clock.install(before)


def _run(tty: bool) -> str:
    err = Screen(tty)
    progress = ReadProgress(Output(out=Screen(tty), err=err), "import")
    progress(1000, 512 * 1024, 1024 * 1024)
    progress.stage("writing 1,000 events...")
    progress.clear()
    return err.getvalue()


def test_a_terminal_sees_the_count_the_bytes_and_the_share_then_a_clean_line() -> None:
    shown = _run(tty=True)
    assert "\rimport: read 1,000 events (0.5 MiB of 1.0 MiB) 50%\033[K" in shown
    assert "\rimport: writing 1,000 events...\033[K" in shown
    assert shown.endswith("\r\033[K")


def test_nothing_when_stderr_is_piped() -> None:
    assert _run(tty=False) == ""


def test_the_write_is_counted_against_the_total_on_a_terminal_only() -> None:
    for tty in (True, False):
        err = Screen(tty)
        show = ReadProgress(Output(out=Screen(tty), err=err), "import").counting("wrote")
        show(250_000, 1_000_000)
        expected = "\rimport: wrote 250,000 of 1,000,000 events 25%\033[K" if tty else ""
        assert err.getvalue() == expected
