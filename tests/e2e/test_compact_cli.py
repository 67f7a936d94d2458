"""`jp conversation compact` (non-interactive) and `jp q -k` through the real jp."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.harness import User, request_text, write_conversation
from tests.support.fake_messages import FakeMessages

NO_RETRIES = '[assistant]\nmax_retries = 0\n[assistant.model]\nid = "anthropic/claude-test"\n'


def nine(user: User, tmp_path: Path) -> str:
    """A nine-turn conversation (reasoning in every turn, a tool call in every other)."""
    return user.import_(write_conversation(tmp_path / "17800000301-nine-turns", 9))


def test_default_rule_strips_turns_2_to_8(user: User, tmp_path: Path) -> None:
    cid = nine(user, tmp_path)
    before = user.tip(cid)
    raw = user.ok("conversation", "print", cid)
    out = user.ok("conversation", "compact", cid, "--dry-run")
    assert "Would have compacted turns 2-8 (reasoning + tools)." in out
    assert user.tip(cid) == before, "--dry-run wrote"

    out = user.ok("conversation", "compact", cid)
    assert out.splitlines() == [
        "Kept turn 1.",
        "Compacted turns 2-8 (reasoning + tools).",
        "Kept turn 9.",
    ]
    assert user.git("rev-parse", f"{user.tip(cid)}^").strip() == before, "one commit"
    event = user.event(user.tip(cid))
    assert event["type"] == "compaction"
    assert (event["from_turn"], event["to_turn"]) == (1, 7), "stored 0-based"
    assert event["reasoning"] == "strip"
    assert event["tool_calls"] == {"policy": "strip", "request": True, "response": True}
    assert "summary" not in event
    subject = user.git("log", "-1", "--format=%s", user.tip(cid)).strip()
    assert subject == "compaction: strip reasoning + tools on turns 2-8"

    info = user.show(cid)
    assert info["compactions"] == [
        {"from_turn": 2, "to_turn": 8, "summary": None, "reasoning": "strip", "tool_calls": "strip"}
    ]
    assert (info["turns"], info["events"]) == (9, 44), "a compaction is not an event JP counts"
    assert "turns 2-8 (reasoning + tools)" in user.ok("conversation", "show", cid)

    compacted = user.ok("conversation", "print", "--compacted", cid)
    for kept in ("<<R01>>", "<<R09>>", "<<Q05>>", "<<A05>>"):
        assert kept in compacted
    for gone in ("<<R02>>", "<<R05>>", "<<R08>>", "<<T02>>", "<<T08>>", "src/f04.rs"):
        assert gone not in compacted, gone
    assert "[compacted]" in compacted
    assert user.ok("conversation", "print", cid) == raw, "print shows the raw history"
    user.fsck()


def test_summarize_range_with_the_fake_then_q_k(online: User, fake: FakeMessages, tmp_path: Path) -> None:
    cid = nine(online, tmp_path)
    online.ok("conversation", "use", cid)
    fake.reply_text("SUMMARY-OF-3-TO-5 keeps src/f04.rs", when={"no_tools": True})
    proc = online.run("conversation", "compact", "--from", "3", "--to", "5", "--summarize")
    assert proc.returncode == 0, proc.stderr
    assert "Compacted turns 3-5 (summary)." in proc.stdout
    (summarizer,) = fake.requests
    assert summarizer["model"] == "claude-test" and not summarizer.get("tools")
    seen = request_text(summarizer)
    for inside in ("<<Q03>>", "<<A05>>", "<<T04>>"):
        assert inside in seen, inside
    for outside in ("<<Q02>>", "<<Q06>>", "<<A02>>"):
        assert outside not in seen, outside
    event = online.event(online.tip(cid))
    assert (event["from_turn"], event["to_turn"]) == (2, 4)
    assert event["summary"] == {"summary": "SUMMARY-OF-3-TO-5 keeps src/f04.rs"}
    assert "compaction: summarize turns 3-5" in online.git("log", "-1", "--format=%s", online.tip(cid))

    printed = online.ok("conversation", "print", "--compacted")
    assert "SUMMARY-OF-3-TO-5" in printed and "<<Q04>>" not in printed
    assert "turns 3-5" in printed, "the summary turn is headed by the turns it stands for"

    # q -k: the configured rules (here the built-in one) compact before the turn
    fake.reply_text("Carrying on.", when={"last_user_contains": "carry on"})
    proc = online.run("q", "-k", "--", "carry on")
    assert proc.returncode == 0, proc.stderr
    kinds = online.kinds(cid)
    assert kinds[-4:] == ["compaction", "turn_start", "chat_request", "chat_response"]
    seen = request_text(fake.requests[-1])
    assert "SUMMARY-OF-3-TO-5" in seen
    for kept in ("<<Q01>>", "<<Q02>>", "<<Q06>>", "<<Q09>>", "carry on"):
        assert kept in seen, kept
    for gone in ("<<Q04>>", "<<T06>>", "<<T02>>"):
        assert gone not in seen, gone
    assert [c["from_turn"] for c in online.show(cid)["compactions"]] == [3, 2]


def test_failed_summaries_write_nothing(online: User, fake: FakeMessages, tmp_path: Path) -> None:
    online.config(NO_RETRIES)
    cid = nine(online, tmp_path)
    before = online.tip(cid)
    fake.reply_text("cut off", stop_reason="max_tokens")
    proc = online.fail("conversation", "compact", cid, "--from", "2", "--to", "4", "-s")
    assert "max_tokens" in proc.stderr
    fake.reply_error(529, "overloaded_error", "the fake is overloaded")
    online.fail("conversation", "compact", cid, "--from", "2", "--to", "4", "-s")
    assert online.tip(cid) == before
    assert len(fake.requests) == 2


def test_dry_run_calls_no_model_and_json(online: User, fake: FakeMessages, tmp_path: Path) -> None:
    cid = nine(online, tmp_path)
    before = online.refs()
    out = online.ok("conversation", "compact", cid, "--from", "3", "--to", "5", "--summarize", "--dry-run")
    assert "Would have compacted turns 3-5 (summary)." in out
    data = json.loads(online.ok("--format", "json", "conversation", "compact", cid, "--dry-run"))
    assert data["dry_run"] is True
    assert [(c["from_turn"], c["to_turn"]) for c in data["compactions"]] == [(2, 8)]
    assert fake.requests == [], "a dry run called the model"
    assert online.refs() == before


def test_reset_withdraws_without_rewriting(user: User, tmp_path: Path) -> None:
    cid = nine(user, tmp_path)
    user.ok("conversation", "use", cid)
    out = user.ok("conversation", "compact", "--reset")
    assert "No compactions to withdraw." in out
    user.ok("conversation", "compact")
    user.ok("conversation", "compact", "--from", "3", "--to", "4", "--tools", "omit")
    standing = user.show(cid)["compactions"]
    assert [(c["from_turn"], c["to_turn"], c["tool_calls"]) for c in standing] == [
        (2, 8, "strip"),
        (3, 4, "omit"),
    ]
    chain = user.commits(cid)
    declined = user.ok("conversation", "compact", "--reset=1", input="n\n")
    assert "turns 2-8 (reasoning + tools), not from a review" in declined
    assert "`jp undo` brings the compactions back" in declined
    assert "Nothing withdrawn; the compactions stand." in declined
    assert user.commits(cid) == chain, "a no changes nothing"
    out = user.ok("conversation", "compact", "--reset=1", input="y\n")
    assert "Withdrew 1 compaction (turns 2-8): appended one withdrawal event." in out
    reset = user.event(user.tip(cid))
    assert reset["type"] == "compaction_reset" and reset["withdraw"] == [0]
    assert user.commits(cid)[:-1] == chain, "history is kept; a reset is one more event"
    assert [(c["from_turn"], c["to_turn"]) for c in user.show(cid)["compactions"]] == [(3, 4)]
    compacted = user.ok("conversation", "print", "--compacted")
    assert "<<R05>>" in compacted and "<<T04>>" not in compacted

    proc = user.fail("conversation", "compact", "--reset=3")
    assert "out of range" in proc.stderr and proc.returncode == 1
    for bad in ("--reset=0", "--reset=x"):
        assert user.fail("conversation", "compact", bad).returncode == 2
    out = user.ok("conversation", "compact", "--reset", "--dry-run")
    assert "Would withdraw 1 compaction (turns 3-4); nothing was written." in out
    assert user.event(user.tip(cid))["type"] == "compaction_reset"
    assert user.show(cid)["compactions"] != []
    out = user.ok("conversation", "compact", "--reset", "--yes")
    assert "Withdrew 1 compaction (turns 3-4)" in out
    assert user.event(user.tip(cid))["withdraw"] is None
    assert user.show(cid)["compactions"] == []
    assert "<<T04>>" in user.ok("conversation", "print", "--compacted")
    assert len(user.commits(cid)) == len(chain) + 2


def test_bad_ranges_and_flags_are_refused(user: User, tmp_path: Path) -> None:
    cid = nine(user, tmp_path)
    before = user.refs()
    cases = [
        (["--from", "0"], "--from"),
        (["--from", "x"], "--from"),
        (["--turn", "100"], "100"),
        (["--keep-first", "17", "--first", "16"], "--keep-first 17"),
        (["--first", "2", "--last", "2"], "--first"),
        (["--reasoning", "-ks:..-3"], "-k"),
        (["--reset", "--reasoning"], "--reset"),
        (["--tools=nope"], "nope"),
        (["-ks:0..5"], ""),
        (["--continue", "--from", "3"], "--continue"),
    ]
    for args, word in cases:
        proc = user.fail("conversation", "compact", cid, *args)
        assert word in proc.stderr, (args, proc.stderr)
    assert user.refs() == before
    for args in (["--from", "7", "--to", "3"], ["--from", "20"], ["--keep-first=-2"]):
        proc = user.run("conversation", "compact", cid, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith("error: ") and "turns 1-9" in proc.stderr, proc.stderr
    assert user.refs() == before
