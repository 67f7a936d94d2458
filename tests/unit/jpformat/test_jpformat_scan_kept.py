"""A small events.json keeps its scanned events (read and checked once); a large one
is read again on each pass (EventFile), and both read as the whole reader does."""

from __future__ import annotations

from pathlib import Path

from porcelain.jpformat import EventFile, read_conversation, scan_conversation
from porcelain.jpformat.eventfile import KEEP_EVENTS
from tests.reliability.test_bulk_write import jp_folder


def test_a_small_folder_keeps_its_events_as_the_whole_reader_reads_them(tmp_path: Path) -> None:
    folder = jp_folder(tmp_path, 50)
    scanned = scan_conversation(folder)
    assert isinstance(scanned.events, list)
    whole = read_conversation(folder)
    assert scanned.events == whole.events and scanned.first == whole.events[0]


def test_a_folder_over_the_kept_count_is_read_again_on_each_pass(tmp_path: Path) -> None:
    folder = jp_folder(tmp_path, KEEP_EVENTS + 1)
    scanned = scan_conversation(folder)
    assert isinstance(scanned.events, EventFile) and len(scanned.events) == KEEP_EVENTS + 1
    assert list(scanned.events) == read_conversation(folder).events
