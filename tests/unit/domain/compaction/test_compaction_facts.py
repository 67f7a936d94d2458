"""The facts of a range (paths, commands, numbers, requests...) and the coverage report."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gitstore.events import Event
from porcelain.domain.compaction.coverage import coverage, kept
from porcelain.domain.compaction.facts import Fact, facts_of, paths_in, range_turns
from porcelain.domain.compaction.proposal import Proposal
from porcelain.models.offline_summary import summarize
from tests.unit.domain.compaction.builders import comp, stamp


def turn(n: int, request: str, answer: str, *extra: Event) -> list[Event]:
    t = stamp(10 * n)
    return [
        {"type": "turn_start", "timestamp": t},
        {"type": "chat_request", "timestamp": t, "content": request},
        *extra,
        {"type": "chat_response", "timestamp": t, "message": answer},
    ]


def tool(cid: str, name: str, args: dict[str, Any], out: str) -> list[Event]:
    t = stamp(1)
    return [
        {"type": "tool_call_request", "timestamp": t, "id": cid, "name": name, "arguments": args},
        {
            "type": "tool_call_response",
            "timestamp": t,
            "id": cid,
            "content": out,
            "is_error": False,
        },
    ]


def kinds(facts: list[Fact], kind: str) -> list[str]:
    return [f.text for f in facts if f.kind == kind]


def test_grep_output_gives_paths_not_fragments() -> None:
    out = "crates/jp_storage/src/lib.rs-21-use foo;\ncrates/jp_cli/src/main.rs:40:fn main()"
    assert paths_in(out) == ["crates/jp_storage/src/lib.rs", "crates/jp_cli/src/main.rs"]
    assert paths_in("see and/or the 3.5 release, e.g. foo.bar") == []


def test_facts_name_their_turn_and_skip_bare_numbers() -> None:
    events = [
        *turn(0, "go ahead", "Sure."),
        *turn(
            1,
            "The client gives up after one retry. Run `cargo test --workspace` please.",
            "max_attempts in src/retry.rs now returns 5; the timeout is 30 s. We will keep it.",
            *tool("c1", "grep", {"pattern": "retry"}, "src/retry.rs-12-let x = 1;"),
        ),
    ]
    facts = facts_of(range_turns(events, 0, 1))
    assert {f.turn for f in facts if f.text.startswith("The client")} == {2}
    assert "go ahead" not in kinds(facts, "request")  # an acknowledgement asks for nothing
    assert kinds(facts, "command") == ["cargo test --workspace"]
    assert kinds(facts, "path") == ["src/retry.rs"]
    assert "max_attempts" in kinds(facts, "identifier")
    assert set(kinds(facts, "number")) == {"returns 5", "30 s"}
    assert any("We will keep it" in d for d in kinds(facts, "decision"))


def test_pending_questions_and_approvals() -> None:
    call = {"type": "tool_call_request", "timestamp": stamp(2), "id": "c9", "name": "fs_delete"}
    events = [
        *turn(0, "Tidy the repo.", "Shall I delete build/out.log?"),
        *turn(1, "Yes, delete it.", "Deleting.", {**call, "arguments": {"path": "x"}}),
    ]
    first = facts_of(range_turns(events, 0, 0))
    assert kinds(first, "question") == ["Shall I delete build/out.log?"]
    both = facts_of(range_turns(events, 0, 1))
    assert kinds(both, "question") == []  # answered in turn 2
    assert kinds(both, "approval") == ["fs_delete"]


def test_coverage_lists_what_the_summary_lacks_and_only_that() -> None:
    events = [
        *turn(0, "Fix src/a.py and run `pytest -q`.", "Done: src/a.py passes."),
        *turn(1, "Thanks, now the docs.", "Updated docs/guide.md."),
    ]
    report = coverage(events, Proposal(1, 1, "Fixed src/a.py."))
    texts = [f.text for f in report.missing]
    assert "pytest -q" in texts
    assert "src/a.py" not in texts
    assert "docs/guide.md" not in texts  # turn 2 is outside the range
    assert all(f.turn == 1 for f in report.missing)
    assert report.after < report.before or report.after == report.before
    assert report.to_json()["tokens"] == {"before": report.before, "after": report.after}


def test_coverage_leaves_out_what_a_standing_compaction_already_took_away() -> None:
    events = [
        *turn(0, "Open src/first.py please.", "Opened src/first.py."),
        *turn(1, "Now fix src/hidden.py <<SECRET>>.", "Fixed src/hidden.py."),
        *turn(2, "Then src/last.py.", "Done with src/last.py."),
    ]
    events.append(comp(1, 1, summary="An earlier fix.", at=40))
    report = coverage(events, Proposal(1, 3, "Worked on the files."))
    texts = " ".join(f.text for f in report.missing)
    assert "src/first.py" in texts and "src/last.py" in texts
    assert "hidden.py" not in texts and "SECRET" not in texts, "hidden text came back"


def test_coverage_counts_what_a_replaced_earlier_summary_still_told_the_model() -> None:
    events = [
        *turn(0, "Open src/first.py please.", "Opened src/first.py."),
        *turn(1, "Now fix src/kept.py and src/lost.py.", "Fixed both."),
        *turn(2, "Then src/last.py.", "Done with src/last.py."),
    ]
    events.append(comp(1, 1, summary="Fixed src/kept.py.", at=40))
    report = coverage(events, Proposal(1, 3, "Nothing to keep."))
    texts = {f.text: f.turn for f in report.missing}
    assert texts.get("src/kept.py") == 2, "the earlier summary held it; the new one drops it"
    assert "src/lost.py" not in texts, "the earlier summary had already dropped it"
    assert report.earlier == ((2, 2),)
    assert report.to_json()["earlier_summaries"] == [{"from_turn": 2, "to_turn": 2}]
    assert any("Turn 2: summarized earlier" in line for line in report.lines())
    mechanical = coverage(events, Proposal(1, 3, None, reasoning=True))
    assert mechanical.earlier == (), "a mechanical proposal leaves the summary standing"


def test_a_proposal_that_saves_nothing_or_grows_the_context_says_so() -> None:
    events = [*turn(0, "Hi.", "Hello."), *turn(1, "Bye.", "Bye.")]
    grown = coverage(events, Proposal(1, 1, "A long summary " * 40))
    assert grown.after > grown.before
    assert f"makes the model's context larger ({grown.before} -> {grown.after} tokens)" in (
        "\n".join(grown.lines())
    )
    report = coverage(events, Proposal(1, 1, "A summary."))
    same = type(report)(report.missing, report.before, report.before)
    assert "saves nothing" in same.lines()[-1]
    smaller = type(report)(report.missing, report.before, report.before - 1)
    assert smaller.saving_lines() == [] and "Warning" not in "\n".join(smaller.lines())


def test_kept_is_case_and_space_blind_and_loose_for_prose() -> None:
    assert kept(Fact("path", "src/A.py", 1), "see src/a.py here")
    assert not kept(Fact("path", "src/b.py", 1), "see src/a.py here")
    sentence = Fact("decision", "We will keep the retry limit at five attempts", 1)
    assert kept(sentence, "decision: we keep the retry limit at five attempts.")


# -- the summary follows the range: every fact it lists comes from the range ----

WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta"])


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[Event], int, int]:
    n = draw(st.integers(1, 7))
    events: list[Event] = []
    for i in range(n):
        word = draw(WORDS)
        extra = tool(f"c{i}", "read", {"path": f"src/t{i}_{word}.rs"}, f"fn t{i}_{word}() {{}}")
        events += turn(
            i,
            f"Please change src/t{i}_{word}.rs and run `cargo test -p t{i}`.",
            f"We will set timeout_t{i} to {i + 2}0 ms in docs/t{i}.md. Shall I go on with t{i}?",
            *extra,
        )
    lo = draw(st.integers(0, n - 1))
    hi = draw(st.integers(lo, n - 1))
    return events, lo, hi


@settings(max_examples=60, deadline=None)
@given(conversations())
def test_the_offline_summary_lists_only_facts_of_its_range(
    case: tuple[list[Event], int, int],
) -> None:
    events, lo, hi = case
    pairs = range_turns(events, lo, hi)
    summary = summarize([e for _, e in pairs])
    outside = [i for i in range(len(events)) if not lo <= i <= hi]
    for i in outside:
        assert f"t{i}_" not in summary and f"t{i}." not in summary, (lo, hi, i, summary)
    for fact in facts_of([(0, e) for e in (e for _, e in pairs)]):
        if fact.text in summary:
            assert any(
                fact.text in str(e.get("content") or e.get("message") or e.get("arguments"))
                for _, e in pairs
            )
    report = coverage(events, Proposal(lo + 1, hi + 1, summary))
    assert all(lo + 1 <= f.turn <= hi + 1 for f in report.missing)
    assert not [f for f in report.missing if f.text in summary]


def test_one_file_spelled_three_ways_is_one_gap_or_none() -> None:
    events = [
        *turn(0, "Look at app.js please.", "It is assets/js/app.js."),
        *turn(1, "Open /home/me/site/assets/js/app.js and src/main.py.", "Opened both."),
        *turn(2, "Later.", "Later."),
    ]
    report = coverage(events, Proposal(1, 2, "Worked on the site."))
    assert kinds(list(report.missing), "path") == ["assets/js/app.js", "src/main.py"]
    assert [f.turn for f in report.missing if f.text == "assets/js/app.js"] == [1]
    kept_one = coverage(events, Proposal(1, 2, "Edited /home/me/site/assets/js/app.js."))
    assert kinds(list(kept_one.missing), "path") == ["src/main.py"]  # another spelling kept


def test_the_report_groups_by_kind_with_requests_and_decisions_first() -> None:
    from porcelain.domain.compaction.coverage import Coverage

    facts = [Fact("request", f"do thing {n}", n) for n in range(1, 11)]
    facts += [Fact("path", f"src/f{n}.py", n) for n in range(1, 8)]
    facts += [Fact("number", "4242", 3)]
    lines = Coverage(tuple(facts), 100, 50).lines()
    assert lines[0] == (
        "Coverage: 18 facts of the range not in the text (10 requests, 7 paths, 1 number)."
    )
    assert lines[1] == "Most important:"
    assert lines[2:10] == [f"- turn {n}, request: do thing {n}" for n in range(1, 9)]
    assert lines[10] == "Requests (2): do thing 9 (turn 9), do thing 10 (turn 10)"
    assert lines[11] == (
        "Paths (7): src/f1.py (turn 1), src/f2.py (turn 2), src/f3.py (turn 3), "
        "src/f4.py (turn 4), src/f5.py (turn 5), and 2 more"
    )
    assert lines[12] == "Numbers (1): 4242 (turn 3)"
