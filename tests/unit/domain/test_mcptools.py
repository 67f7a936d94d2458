"""The MCP server's tools without a server: arguments checked into requests, turn
ranges, excerpts and answers kept within their bytes; and an imported session's
project folder."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from porcelain.domain.mcptools import (
    SPECS,
    ReadRequest,
    ToolInputError,
    bounded,
    excerpt,
    json_bounded,
    list_request,
    read_request,
    search_request,
    turn_range,
)
from porcelain.domain.sessionproject import project_of


def test_every_schema_names_only_what_its_parser_takes() -> None:
    for name, (description, schema) in SPECS.items():
        assert schema["type"] == "object" and description.endswith(".")
        for key in schema.get("required", []):
            assert key in schema["properties"], (name, key)


def test_a_search_request_with_every_filter() -> None:
    got = search_request(
        {"query": "oom", "tool": "codex", "project": "shop", "since": "2026-03-01",
         "until": "2026-03-02", "limit": 3, "regex": False}
    )  # fmt: skip
    assert (got.query, got.limit, got.filters.tool, got.filters.project) == (
        "oom",
        3,
        "codex",
        "shop",
    )
    assert got.filters.since == datetime(2026, 3, 1, tzinfo=UTC)
    assert got.filters.until is not None and got.filters.until.date().day == 2  # the whole day
    assert got.filters.within(datetime(2026, 3, 2, 23, 0, tzinfo=UTC))
    assert not got.filters.within(datetime(2026, 3, 3, tzinfo=UTC))
    assert got.filters.keeps("codex", "/home/me/shop") and not got.filters.keeps("jp", None)


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({}, "query is required"),
        ({"query": 5}, "query must be a string"),
        ({"query": "x" * 1001}, "longer than 1000"),
        ({"query": "x", "limit": 51}, "limit must be"),
        ({"query": "x", "limit": True}, "limit must be"),
        ({"query": "x", "tool": "emacs"}, "tool must be one of"),
        ({"query": "x", "since": "yesterday"}, "since must be a date"),
        ({"query": "x", "since": "2026-02-02", "until": "2026-01-01"}, "since is after until"),
        ({"query": "x", "regex": "yes"}, "regex must be true or false"),
        ({"query": "x", "command": "rm"}, "unknown argument 'command'"),
    ],
)
def test_bad_search_arguments_say_what_is_wrong(arguments: dict[str, Any], says: str) -> None:
    with pytest.raises(ToolInputError, match=re.escape(says)):
        search_request(arguments)


def test_read_and_list_requests() -> None:
    assert read_request({"conversation": "jp-c1"}).view == "raw"
    with pytest.raises(ToolInputError, match="view must be"):
        read_request({"conversation": "jp-c1", "view": "html"})
    with pytest.raises(ToolInputError, match="before from_turn"):
        read_request({"conversation": "jp-c1", "from_turn": 4, "to_turn": 2})
    with pytest.raises(ToolInputError, match="conversation is required"):
        read_request({})
    assert list_request({}).limit == 20 and list_request({"archived": True}).filters.archived


@pytest.mark.parametrize(
    ("first", "last", "count", "turns"),
    [(None, None, 12, range(7, 12)), (None, 3, 12, range(3)), (2, None, 12, range(1, 6)),
     (2, 40, 12, range(1, 12)), (12, 12, 12, range(11, 12))],
)  # fmt: skip
def test_turn_ranges(first: int | None, last: int | None, count: int, turns: range) -> None:
    assert turn_range(ReadRequest("c", first, last, "raw"), count) == turns


def test_a_turn_past_the_end_or_no_turn_at_all() -> None:
    with pytest.raises(ToolInputError, match="turn 13 does not exist"):
        turn_range(ReadRequest("c", 13, None, "raw"), 12)
    with pytest.raises(ToolInputError, match="no turns yet"):
        turn_range(ReadRequest("c", None, None, "raw"), 0)


def test_an_excerpt_is_around_the_hit() -> None:
    line = "a" * 500 + " NEEDLE " + "b" * 500
    shown = excerpt(line, re.compile("NEEDLE"))
    assert "NEEDLE" in shown and shown.startswith("...") and shown.endswith("...")
    assert len(shown) <= 246
    assert excerpt("short NEEDLE", re.compile("NEEDLE")) == "short NEEDLE"


def test_text_is_bounded_with_a_plain_line() -> None:
    assert bounded("small", 100) == "small"
    cut = bounded("line\n" * 1000, 100)
    assert cut.startswith("line\n") and "cut to" in cut.splitlines()[-1]
    assert len(cut.split("\n[jp:")[0].encode()) <= 100
    one = bounded("é" * 1000, 101)  # never half a character
    assert one.split("\n[jp:")[0] == "é" * 50


def test_json_is_bounded_by_leaving_out_the_last_items() -> None:
    items = [{"n": i, "text": "x" * 100} for i in range(50)]
    text = json_bounded({"shown": 50}, "rows", items, 2000)
    data = json.loads(text)
    assert len(text.encode()) <= 2000 and data["rows"] == items[: len(data["rows"])]
    assert data["cut"].startswith(f"{50 - len(data['rows'])} more left out")
    assert "cut" not in json.loads(json_bounded({}, "rows", items[:2], 2000))


def test_the_project_of_an_imported_session() -> None:
    claude = [
        {"type": "conversation_start"},
        {"type": "turn_start", "metadata": {"source_record": {"cwd": "/home/me/a"}}},
    ]
    codex = [
        {"type": "source_record", "record": {"type": "session_meta", "payload": {"cwd": "/w"}}}
    ]
    assert project_of(claude) == "/home/me/a" and project_of(codex) == "/w"
    assert project_of([{"type": "source_record", "record": {"cwd": 5}}]) is None
    assert project_of([{"type": "chat_request", "content": "cwd"}]) is None
