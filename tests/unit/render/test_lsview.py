"""`ls` rows: filters, order, age and the table, as pure functions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from porcelain.errors import UsageError
from porcelain.render import lsview

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def row(cid: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": cid,
        "title": None,
        "turns": 1,
        "active": False,
        "pinned": False,
        "archived": False,
        "source_id": None,
        "forked_from": None,
        "diverged_from": None,
        "labels": {},
        "created_at": "2026-01-01T00:00:00Z",
        "last_event_at": None,
        "preview": "",
        "unreadable": None,
    }
    return base | extra


ROWS = [
    row("jp-c1", title="Parser work", last_event_at="2026-03-01T11:00:00Z", labels={"a": "x"}),
    row("jp-c2", pinned=True, turns=5, last_event_at="2026-02-01T00:00:00Z", labels={"a": "y"}),
    row("jp-c3", active=True, title="lexer", created_at="2026-02-28T00:00:00Z"),
]


def ids(rows: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in rows]


def test_filters_and() -> None:
    assert ids(lsview.keep(ROWS, pinned=True)) == ["jp-c2"]
    assert ids(lsview.keep(ROWS, labels=[("a", None)])) == ["jp-c1", "jp-c2"]
    assert ids(lsview.keep(ROWS, labels=[("a", "y")])) == ["jp-c2"]
    assert ids(lsview.keep(ROWS, labels=[("a", None)], pinned=True)) == ["jp-c2"]
    assert ids(lsview.keep(ROWS, title="PARSER")) == ["jp-c1"]
    since = lsview.parse_since("2d", NOW)
    assert ids(lsview.keep(ROWS, since=since)) == ["jp-c1", "jp-c3"], "creation counts"


def test_default_order_puts_pinned_then_active_last() -> None:
    assert ids(lsview.order(ROWS, "activity", False)) == ["jp-c1", "jp-c2", "jp-c3"]
    shuffled = [ROWS[2], ROWS[0], ROWS[1]]
    assert ids(lsview.order(shuffled, "activity", False)) == ["jp-c1", "jp-c2", "jp-c3"]
    assert ids(lsview.order(ROWS, "turns", True)) == ["jp-c2", "jp-c3", "jp-c1"]
    assert ids(lsview.order(ROWS, "title", False)) == ["jp-c2", "jp-c3", "jp-c1"]
    assert ids(lsview.order(ROWS, "created", False)) == ["jp-c1", "jp-c2", "jp-c3"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30m", NOW - timedelta(minutes=30)),
        ("2h", NOW - timedelta(hours=2)),
        ("1w", NOW - timedelta(days=7)),
        ("2026-02-03", datetime(2026, 2, 3, tzinfo=UTC)),
        ("2026-02-03T04:05:06Z", datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)),
    ],
)
def test_since_takes_durations_and_times(text: str, expected: datetime) -> None:
    assert lsview.parse_since(text, NOW) == expected


@pytest.mark.parametrize("bad", ["", "yesterday", "3 parsecs", "-2d", "2026-13-40"])
def test_a_bad_since_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError):
        lsview.parse_since(bad, NOW)


@pytest.mark.parametrize("bad", ["", "1x", "a b", "=v"])
def test_a_bad_label_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError):
        lsview.parse_label(bad)


def test_age_reads_as_people_say_it() -> None:
    def aged(delta: timedelta) -> str:
        return lsview.age(row("x", last_event_at=(NOW - delta).isoformat()), NOW)

    assert aged(timedelta(seconds=5)) == "just now"
    assert aged(timedelta(minutes=5)) == "5m ago"
    assert aged(timedelta(hours=3)) == "3h ago"
    assert aged(timedelta(days=2)) == "2d ago"
    assert aged(timedelta(days=30)) == "4w ago"
    assert aged(timedelta(days=400)) == (NOW - timedelta(days=400)).strftime("%Y-%m-%d")
    assert lsview.age(row("x", created_at=None), NOW) == "-"


def test_table_escapes_untrusted_fields_before_styling() -> None:
    hostile = row(
        "jp-c1",
        title="\x1b]0;PWN\x07t\nfake",
        forked_from="jp-c9",
        diverged_from="jp-c8",
        pinned=True,
    )
    lines = lsview.table([hostile], {"jp-c1": 5}, NOW, style=lsview.highlighted)
    assert len(lines) == 2
    body = lines[1]
    for style in ("\x1b[1;35m", "\x1b[0m", "\x1b[2m"):
        body = body.replace(style, "")
    assert "\x1b" not in body and "\x07" not in body and "\n" not in body
    assert "[pinned] [fork of jp-c9] [diverged from jp-c8] \\x1b]0;PWN\\x07t\\nfake" in body
    plain = lsview.table([hostile], {"jp-c1": 5}, NOW)
    assert plain[1].startswith("jp-c1 ")


def test_a_review_is_marked_as_one_not_as_a_fork() -> None:
    review = row("jp-c5", source_id="jp-c1", forked_from="jp-c1")
    assert lsview.markers(review, show_archived=False) == "[review of jp-c1]"
    archived = row("jp-c6", archived=True)
    assert lsview.markers(archived, show_archived=True) == "[archived]"
    assert lsview.markers(archived, show_archived=False) == ""
