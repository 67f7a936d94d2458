"""The pure side of other tools' sessions: lines, mapping rules, paths (no store, no jp)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from gitstore import Kind
from gitstore import turns as store_turns
from porcelain.domain.sessionfiles import claude_files, codex_files, detect, rel_path_problem
from porcelain.jpformat import claude_code, codex
from porcelain.jpformat.rewind import Fork
from porcelain.jpformat.sessionlines import parse_lines, read_lines
from porcelain.jpformat.sessionmap import INDEX_KEY, RECORD_TYPE, SOURCE_KEY, records_of

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"
CLAUDE_ROOT = FIXTURES / "claude-code"
PROJECT = "-home-me-demo"
SESSION = "5b9f0c1e-1111-4a2b-9c3d-000000000001"
CLAUDE = CLAUDE_ROOT / PROJECT / f"{SESSION}.jsonl"
REWIND = next((FIXTURES / "claude-code-rewind").rglob("*.jsonl"))
CODEX_ROOT = FIXTURES / "codex"
ROLLOUT = "rollout-2026-05-11T10-00-00-019e0000-0000-7000-8000-00000000c0de.jsonl"
CODEX = CODEX_ROOT / "sessions" / "2026" / "05" / "11" / ROLLOUT


def records(path: Path) -> list[dict[str, Any]]:
    return read_lines(path, 10 << 20).records


def flat(groups: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [e for g in groups for e in g]


def kinds(groups: list[list[dict[str, Any]]]) -> list[str]:
    return [e["type"] for e in flat(groups)]


# -- lines ------------------------------------------------------------------------------


def test_bad_lines_are_named_and_the_rest_is_read() -> None:
    data = (
        b'{"type": "a"}\n{not json\n[1, 2]\n\n'
        + b'{"b": "'
        + b"x" * 2000
        + b'"}\n{"c": NaN}\n{"type": "d"}\n'
    )
    out = parse_lines(data, 1024)
    assert out.records == [{"type": "a"}, {"type": "d"}]
    assert out.lines == [1, 7]
    assert [s.line for s in out.skipped] == [2, 3, 5, 6]
    assert "not a JSON object" in out.skipped[1].reason
    assert "over 1024" in out.skipped[2].reason


def test_lines_are_read_one_at_a_time_and_a_long_one_is_read_through() -> None:
    long = b'{"x": "' + b"y" * 5000 + b'"}\n'
    data = b'{"type": "a"}\n' + long + b'{"type": "b"}\n' + b'{"c": ' + b"3" * 3000
    out = parse_lines(data, 1024)
    assert out.records == [{"type": "a"}, {"type": "b"}] and out.lines == [1, 3]
    assert [s.line for s in out.skipped] == [2] and "over 1024" in out.skipped[0].reason
    assert out.pending, "a long last line without its newline is being written"
    whole = data[: data.rindex(b"\n") + 1]
    assert (out.size, out.newlines) == (len(whole), 3)
    assert out.sha1 == hashlib.sha1(whole).hexdigest()
    assert parse_lines(whole, 1024).sha1 == out.sha1


def test_a_last_line_without_its_newline_waits() -> None:
    out = parse_lines(b'{"type": "a"}\n{"b": ', 1024)
    assert out.records == [{"type": "a"}] and out.pending and not out.skipped
    assert out.size == len(b'{"type": "a"}\n')
    assert not parse_lines(b'{"type": "a"}\n', 1024).pending


def test_windows_line_ends_are_read() -> None:
    assert parse_lines(b'{"type": "a"}\r\n{"type": "b"}\r\n', 1024).records == [{"type": "a"}, {"type": "b"}]


# -- Claude Code ------------------------------------------------------------------------


def test_claude_code_records_map_onto_jp_events() -> None:
    mapped = claude_code.map_records(records(CLAUDE))
    assert mapped.session == SESSION and mapped.agent is None
    events = flat(mapped.groups)
    requests = [e["content"] for e in events if e["type"] == Kind.CHAT_REQUEST]
    assert requests == ["List the files here.", "Now read a.txt please.", "What should I do next?"]
    answers = [e["message"] for e in events if e.get("message")]
    assert answers[:2] == ["I will look at the folder.", "There are two files: a.txt and b.txt."]
    assert [e["reasoning"] for e in events if "reasoning" in e] == [
        "The user wants a listing; run ls."
    ]
    calls = [(e["id"], e["name"]) for e in events if e["type"] == Kind.TOOL_CALL_REQUEST]
    assert calls == [("toolu_01", "Bash"), ("toolu_02", "Read")]
    results = [e["content"] for e in events if e["type"] == Kind.TOOL_CALL_RESPONSE]
    assert results == ["a.txt\nb.txt", "hello from a.txt"]  # text blocks joined


def test_one_api_message_over_several_lines_is_one_answer() -> None:
    recs = records(CLAUDE)
    events = flat(claude_code.map_records(recs).groups)
    turns = store_turns.turn_indices(events)
    first = [t for e, t in zip(events, turns, strict=True) if e["type"] != RECORD_TYPE][:6]
    assert len(set(first)) == 1, (
        "thinking, text and tool_use of msg_01A sit in one turn, no turn_start between"
    )


def test_every_record_is_kept_once_in_order() -> None:
    recs = records(CLAUDE)
    groups = claude_code.map_records(recs).groups
    assert len(groups) == len(recs)
    assert records_of(flat(groups)) == recs
    for group, record in zip(groups, recs, strict=True):
        carried = [
            e for e in group if e["type"] == RECORD_TYPE or SOURCE_KEY in (e.get("metadata") or {})
        ]
        assert len(carried) == 1 and group[0] is carried[0]
        assert (group[0].get("record") or group[0]["metadata"][SOURCE_KEY]) is record


def test_meta_echoes_progress_system_and_unknown_records_are_not_sent() -> None:
    recs = records(CLAUDE)
    groups = claude_code.map_records(recs).groups
    for record, group in zip(recs, groups, strict=True):
        if record.get("isMeta") or record["type"] in (
            "progress",
            "system",
            "file-history-snapshot",
            "summary",
            "future-record-kind",
        ):
            assert [e["type"] for e in group] == [RECORD_TYPE], record["type"]
    echo = next(g for r, g in zip(recs, groups, strict=True) if "<command-name>" in json.dumps(r))
    assert [e["type"] for e in echo] == [RECORD_TYPE]


def test_a_compact_boundary_is_a_compaction_of_the_turns_before_it() -> None:
    recs = records(CLAUDE)
    events = flat(claude_code.map_records(recs).groups)
    (compaction,) = [e for e in events if e["type"] == Kind.COMPACTION]
    summary = next(r for r in recs if r.get("isCompactSummary"))["message"]["content"]
    assert compaction["summary"] == {"summary": summary}
    turns = store_turns.turn_indices(events)
    at = events.index(compaction)
    assert compaction["from_turn"] == 0 and compaction["to_turn"] == turns[at] - 1
    before = {
        e.get("content") for e, t in zip(events, turns, strict=True) if t <= compaction["to_turn"]
    }
    assert "Now read a.txt please." in before  # the boundary fell mid-turn, after a tool result
    assert (
        turns[events.index(next(e for e in events if e.get("content") == "What should I do next?"))]
        == turns[at]
    )


def test_a_tool_result_without_its_open_call_is_only_a_record() -> None:
    base = {"sessionId": "s", "timestamp": "2026-01-01T00:00:00Z"}
    recs = [
        {**base, "type": "user", "message": {"role": "user", "content": "hi"}},
        {
            **base,
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "stray"}],
            },
        },
    ]
    assert kinds(claude_code.map_records(recs).groups) == [
        "turn_start",
        "chat_request",
        RECORD_TYPE,
    ]


def test_the_mapping_of_a_prefix_is_a_prefix() -> None:
    recs = records(CLAUDE)
    whole = claude_code.map_records(recs).groups
    for cut in range(len(recs)):
        assert claude_code.map_records(recs[:cut]).groups == whole[:cut]


def test_a_subagent_stream_names_its_agent() -> None:
    sub = CLAUDE_ROOT / PROJECT / SESSION / "subagents" / "agent-a1b2c3.jsonl"
    mapped = claude_code.map_records(records(sub))
    assert (mapped.session, mapped.agent) == (SESSION, "a1b2c3")


# -- Codex ------------------------------------------------------------------------------


def test_codex_messages_written_twice_are_one_event() -> None:
    events = flat(codex.map_records(records(CODEX)).groups)
    said = [e["message"] for e in events if e.get("message")]
    assert said == ["The test passes now: add() subtracted.", "The docs are at docs.pytest.org."]
    asked = [e["content"] for e in events if e["type"] == Kind.CHAT_REQUEST]
    assert asked == ["Fix the failing test in calc.py.", "Search the web for pytest docs."]
    assert [e["reasoning"] for e in events if "reasoning" in e] == ["**Looking at the test**"]


def test_codex_twins_in_either_order_count_once() -> None:
    at = "2026-01-01T00:00:00Z"
    item = {
        "timestamp": at,
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}],
        },
    }
    event = {
        "timestamp": at,
        "type": "event_msg",
        "payload": {"type": "agent_message", "message": "ok"},
    }
    for recs in ([item, event], [event, item]):
        events = flat(codex.map_records(recs).groups)
        assert [e.get("message") for e in events if e.get("message")] == ["ok"]


def test_codex_tools_models_compaction_and_unknown_records() -> None:
    recs = records(CODEX)
    mapped = codex.map_records(recs)
    assert mapped.session == "019e0000-0000-7000-8000-00000000c0de"
    events = flat(mapped.groups)
    calls = {e["id"]: e for e in events if e["type"] == Kind.TOOL_CALL_REQUEST}
    assert calls["call_A1"]["arguments"] == {"command": ["pytest", "-q"]}  # a JSON string parsed
    assert (
        calls["call_B2"]["name"] == "apply_patch"
        and "Begin Patch" in calls["call_B2"]["arguments"]["input"]
    )
    answered = {e["id"] for e in events if e["type"] == Kind.TOOL_CALL_RESPONSE}
    assert answered == set(calls), "every call (the web search too) has its result"
    assert all(e["metadata"].get("model") == "gpt-5.1-codex" for e in events if e.get("message"))
    (compaction,) = [e for e in events if e["type"] == Kind.COMPACTION]
    assert compaction["summary"]["summary"].startswith("Summary of codex work")
    assert "gAAAAopaque" not in json.dumps(
        [e for e in events if e["type"] != RECORD_TYPE and "reasoning" in e]
    )
    assert records_of(events) == recs


# -- paths --------------------------------------------------------------------------------


def test_relative_paths_are_the_same_whatever_path_is_given() -> None:
    want = [f"{PROJECT}/{SESSION}.jsonl", f"{PROJECT}/{SESSION}/subagents/agent-a1b2c3.jsonl"]
    for given in (CLAUDE_ROOT, CLAUDE_ROOT / PROJECT):
        assert [f.rel for f in claude_files(given)] == want
    assert [f.rel for f in claude_files(CLAUDE)] == want[:1]
    sub = claude_files(CLAUDE_ROOT / PROJECT / SESSION / "subagents" / "agent-a1b2c3.jsonl")
    assert [(f.rel, f.agent) for f in sub] == [(want[1], True)]
    rel = f"sessions/2026/05/11/{ROLLOUT}"
    for given in (CODEX_ROOT, CODEX_ROOT / "sessions", CODEX):
        assert [f.rel for f in codex_files(given)] == [rel]


def test_a_lone_rollout_is_placed_by_its_date(tmp_path: Path) -> None:
    lone = tmp_path / ROLLOUT
    lone.write_bytes(CODEX.read_bytes())
    assert [f.rel for f in codex_files(lone)] == [f"sessions/2026/05/11/{ROLLOUT}"]


@pytest.mark.parametrize(
    "rel",
    [
        "/etc/passwd.jsonl",
        "../x.jsonl",
        "a/../../x.jsonl",
        "a//b.jsonl",
        "a\\b.jsonl",
        "a/b.txt",
        "",
        None,
        "a/\x1b[2J.jsonl",
        "./a.jsonl",
    ],
)
def test_a_recorded_path_that_leaves_the_folder_is_refused(rel: Any) -> None:
    assert rel_path_problem(rel)


def test_formats_are_detected(tmp_path: Path) -> None:
    assert detect(CLAUDE_ROOT) == detect(CLAUDE) == "claude-code"
    assert detect(CODEX_ROOT) == detect(CODEX) == "codex"
    (tmp_path / "events.json").write_text("[]")
    assert detect(tmp_path) == "jp"
    assert detect(tmp_path / "missing") is None


def test_an_interruption_note_and_images_are_no_prompt_text() -> None:
    at = {"sessionId": "s", "timestamp": "2026-01-01T00:00:00Z", "type": "user"}
    note = [{"type": "text", "text": "[Request interrupted by user for tool use]"}]
    recs = [{**at, "message": {"role": "user", "content": note}}]
    assert kinds(claude_code.map_records(recs).groups) == [RECORD_TYPE]
    image = {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}
    item = {
        "timestamp": at["timestamp"],
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "what is this?"}, image],
        },
    }
    (event,) = [e for e in flat(codex.map_records([item]).groups) if e["type"] == Kind.CHAT_REQUEST]
    assert event["content"] == "what is this?"


def _rewound() -> list[dict[str, Any]]:
    at = {"sessionId": "s", "timestamp": "2026-01-01T00:00:00Z"}

    def said(uuid: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        return {
            **at,
            "type": role,
            "uuid": uuid,
            "parentUuid": parent,
            "message": {"role": role, "content": content},
        }

    return [
        said("u1", None, "user", "first prompt"),
        said("a1", "u1", "assistant", "first answer"),
        {**at, "type": "progress", "uuid": "p1", "parentUuid": "a1", "data": {}},
        said("u2", "p1", "user", "second prompt"),
        said("a2", "u2", "assistant", "second answer"),
        said("u3", "p1", "user", "second prompt, rewritten after /rewind"),
        said("a3", "u3", "assistant", "another answer"),
    ]


def test_a_rewind_is_a_branch_of_its_own_from_the_record_it_went_back_to() -> None:
    recs = _rewound()
    mapped = claude_code.map_records(recs)
    assert mapped.branch_of == [0, 0, 0, 0, 0, 1, 1]
    assert mapped.forks == [Fork(parent=0, at=2, first=5)]
    assert Kind.COMPACTION not in kinds(mapped.groups)
    fork = [mapped.groups[i] for i in (5, 6)]
    assert [g[0]["metadata"][INDEX_KEY] for g in fork] == [5, 6]
    assert all(INDEX_KEY not in (g[0].get("metadata") or {}) for g in mapped.groups[:5])
    # the branch goes on from the state at its fork point: the rewound prompt is turn 1 again
    shared = flat(mapped.groups[:3])
    main = shared + flat(mapped.groups[3:5])
    branch = shared + flat(fork)
    assert store_turns.turn_indices(main)[-1] == store_turns.turn_indices(branch)[-1] == 1
    texts = [e.get("content") or e.get("message") for e in branch if e["type"] != RECORD_TYPE]
    assert "second prompt" not in texts and texts[-2:] == [
        "second prompt, rewritten after /rewind",
        "another answer",
    ]
    assert records_of(flat(mapped.groups)) == recs
    for cut in range(len(recs)):
        shorter = claude_code.map_records(recs[:cut])
        assert shorter.groups == mapped.groups[:cut]
        assert shorter.branch_of == mapped.branch_of[:cut]


def test_a_second_rewind_and_a_rewind_inside_a_branch_fork_from_where_they_went_back() -> None:
    at = {"sessionId": "s", "timestamp": "2026-01-01T00:00:00Z"}
    recs = [
        *_rewound(),
        {**at, "type": "user", "uuid": "u4", "parentUuid": "p1", "message": {"content": "third"}},
        {**at, "type": "user", "uuid": "u5", "parentUuid": "a3", "message": {"content": "more"}},
        {**at, "type": "user", "uuid": "u6", "parentUuid": "a3", "message": {"content": "redo"}},
    ]
    mapped = claude_code.map_records(recs)
    assert mapped.branch_of[7:] == [2, 1, 3]
    assert mapped.forks[1:] == [Fork(0, 2, 7), Fork(1, 6, 9)]


def test_records_without_a_parent_stay_on_the_branch_of_the_record_before() -> None:
    recs = records(REWIND)
    mapped = claude_code.map_records(recs)
    assert mapped.branch_of == [0] * 8 + [1] * 4
    assert mapped.forks == [Fork(parent=0, at=2, first=8)]
    calls = [e for e in flat(mapped.groups) if e["type"] == Kind.TOOL_CALL_REQUEST]
    assert [c["id"] for c in calls] == ["toolu_R1"], "the abandoned branch keeps its tool call"


def test_a_prompt_that_continues_from_the_leaf_is_no_rewind() -> None:
    recs = _rewound()[:5]
    assert Kind.COMPACTION not in kinds(claude_code.map_records(recs).groups)


def test_a_line_without_a_type_is_skipped_and_skips_are_named_a_few() -> None:
    out = parse_lines(b'{"type": "a"}\n' + b"{}\n" * 50, 1024)
    assert out.records == [{"type": "a"}]
    assert out.skipped_total == 50 and len(out.skipped) == 20
    assert "no type" in out.skipped[0].reason
