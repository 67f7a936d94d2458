"""The interactive compaction review (D66) end to end: with the real SDK and the
loopback fake, and fully offline with jp's built-in model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.harness import User, blocks, ids_in, request_text, tool_use, write_conversation
from tests.support.fake_chat import FakeChat
from tests.support.fake_messages import FakeMessages

CONFIG = """
[assistant.model]
id = "anthropic/claude-test"

[conversation.compaction.review.model]
id = "anthropic/claude-review"

[conversation.tools.echo]
command = ["python3", "-c", "print('echo')"]
confirm = false
"""
REVIEW = {"tools_include": "propose_compaction"}
SUMMARIZER = {"no_tools": True}


def twelve(user: User, tmp_path: Path) -> str:
    return user.import_(write_conversation(tmp_path / "17800000401-twelve-turns", 12))


def start(user: User, source: str, *flags: str) -> str:
    user.ok("conversation", "use", source)
    before = user.tip(source)
    out = user.ok("conversation", "compact", "--interactive", *flags)
    review = user.active()
    assert review != source and review in ids_in(out), "start prints the review's id"
    assert user.tip(source) == before, "starting a review wrote to the source"
    return review


def results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return blocks(body, "tool_result")


def test_start_and_discussion_with_the_fake(online: User, fake: FakeMessages, tmp_path: Path) -> None:
    online.config(CONFIG)
    source = twelve(online, tmp_path)
    fake.reply_text("DRAFT-ONE", when=SUMMARIZER)
    review = start(online, source, "--from", "2", "--to", "9")
    (summarizer,) = fake.requests
    assert summarizer["model"] == "claude-test"
    assert "<<Q02>>" in request_text(summarizer) and "<<Q10>>" not in request_text(summarizer)

    info = online.show(review)
    assert info["source_id"] == source and info["active"] is True
    coverage = info["proposal"].pop("coverage")
    assert info["proposal"] == {
        "from_turn": 2,
        "to_turn": 9,
        "summary": "DRAFT-ONE",
        "reasoning": None,
        "tool_calls": None,
    }
    assert {m["turn"] for m in coverage["missing"]} <= set(range(2, 10))
    assert "Q02 <<Q02>>" in [m["text"] for m in coverage["missing"]]
    source_tip, review_tip = online.tip(source), online.tip(review)
    assert online.git("merge-base", source_tip, review_tip).strip() == source_tip
    assert (online.note("refs/notes/source", review) or "").strip() == source
    assert online.note("refs/notes/source", source) is None
    rows = {r["id"]: r for r in online.ls()}
    assert rows[review]["source_id"] == source and rows[source]["source_id"] is None

    fake.reply_blocks(
        [{"type": "text", "text": "Trying."}, tool_use("propose_compaction", from_turn=2, to_turn=15, summary="S")],
        when=REVIEW,
    )
    fake.reply_blocks(
        [tool_use("propose_compaction", from_turn=3, to_turn=8, summary="REVISED-SUMMARY")],
        when=REVIEW,
    )
    fake.reply_text("Recorded it.", when=REVIEW)
    out = online.ok("q", "stop at 8 please")
    assert "Recorded it." in out
    first, second, third = fake.requests[1:]
    for body in (first, second, third):
        assert body["model"] == "claude-review"
        assert [t["name"] for t in body["tools"]] == ["propose_compaction"], "inherited tools are off"
    seen = request_text(first)
    assert "[turn 1] Q01" in seen and "[turn 12] Q12" in seen
    assert "DRAFT-ONE" in seen, "the opening proposal is part of the review's history"
    assert "stop at 8 please" in seen and "] stop at 8" not in seen, "new turns carry no marker"
    refused = results(second)[-1]
    assert refused.get("is_error") is True
    assert "15" in refused["content"] and "12" in refused["content"]
    accepted = results(third)[-1]
    assert not accepted.get("is_error") and "3" in accepted["content"] and "8" in accepted["content"]
    revised = online.show(review)["proposal"]
    assert (revised["from_turn"], revised["to_turn"], revised["summary"]) == (3, 8, "REVISED-SUMMARY")

    printed = online.ok("conversation", "print", review)
    assert "> [turn 1] Q01" in printed and "> [turn 12] Q12" in printed
    assert "> stop at 8 please" in printed
    assert "[turn" not in online.ok("conversation", "print", source)

    before = online.tip(source)
    # --abort ends it: archived, the source untouched and active again
    online.ok("conversation", "compact", "--abort")
    assert online.tip(source) == before
    assert online.ref(f"refs/conversations/{review}") is None
    assert online.ref(f"refs/archive/conversations/{review}") == online.tip(review)
    assert online.active() == source
    assert [r["id"] for r in online.ls()] == [source], "an aborted review is out of the list"
    online.ok("conversation", "compact", source)  # no longer blocked
    assert online.event(online.tip(source))["type"] == "compaction"


def test_continue_decline_apply_and_rerun(online: User, fake: FakeMessages, tmp_path: Path) -> None:
    online.config(CONFIG)
    source = twelve(online, tmp_path)
    fake.reply_text("DRAFT-TO-APPLY", when=SUMMARIZER)
    review = start(online, source, "--from", "2", "--to", "9")
    before = online.tip(source)
    refs = online.refs()

    declined = online.run("conversation", "compact", "--continue", input="n\n")
    assert "DRAFT-TO-APPLY" in declined.stdout + declined.stderr
    assert "12" in declined.stdout + declined.stderr
    assert online.refs() == refs, "declining changed something"
    assert online.active() == review

    out = online.ok("conversation", "compact", "--continue", "--yes")
    assert source in out
    tip = online.tip(source)
    assert online.git("rev-parse", f"{tip}^").strip() == before, "exactly one new commit"
    event = online.event(tip)
    assert event["type"] == "compaction"
    assert (event["from_turn"], event["to_turn"]) == (1, 8), "stored turns are 0-based"
    assert event["summary"] == {"summary": "DRAFT-TO-APPLY"}
    assert event["metadata"]["proposal"]["review"] == review
    assert online.ref(f"refs/conversations/{review}") is None
    assert online.ref(f"refs/archive/conversations/{review}")
    assert online.active() == source
    assert online.show(review)["source_id"] == source, "an archived review still names its source"
    assert [(c["from_turn"], c["to_turn"], c["summary"]) for c in online.show(source)["compactions"]] == [
        (2, 9, "DRAFT-TO-APPLY")
    ]
    reflog = online.git("reflog", "show", "--format=%gs", f"refs/conversations/{source}")
    assert reflog.splitlines()[0].startswith("jp conversation compact --continue")

    # a rerun of the same review applies nothing twice and needs no answer
    online.ok("conversation", "unarchive", review)
    online.ok("conversation", "use", review)
    out = online.ok("conversation", "compact", "--continue")
    assert "already applied" in out
    assert online.tip(source) == tip
    assert online.ref(f"refs/archive/conversations/{review}")
    assert online.active() == source

    fake.reply_text("Next.", when={"last_user_contains": "next step"})
    online.ok("q", "next step")
    seen = request_text(fake.requests[-1])
    assert "DRAFT-TO-APPLY" in seen and "<<Q01>>" in seen and "<<Q10>>" in seen
    assert "<<Q05>>" not in seen and "<<Q09>>" not in seen
    assert "[turn" not in seen, "markers belong to the review only"
    online.fsck()


def offline_proposal(user: User, review: str) -> dict[str, Any]:
    proposal = user.show(review)["proposal"]
    assert isinstance(proposal, dict)
    return proposal


def test_review_flow_fully_offline(user: User, tmp_path: Path) -> None:
    source = twelve(user, tmp_path)
    review = start(user, source)
    opening = offline_proposal(user, review)
    assert (opening["from_turn"], opening["to_turn"]) == (2, 11), "the built-in rule's range"
    assert "offline" in opening["summary"] and "<<Q02>>" in opening["summary"]

    out = user.ok("q", "turns 2-5")
    assert "turns 2-5" in out
    assert (offline_proposal(user, review)["from_turn"], offline_proposal(user, review)["to_turn"]) == (2, 5)
    user.ok("q", "keep the last 3")
    assert offline_proposal(user, review)["to_turn"] == 9
    user.ok("q", "summary: NEW-SUMMARY about src/f04.rs")
    assert offline_proposal(user, review)["summary"] == "NEW-SUMMARY about src/f04.rs"
    user.ok("q", "add: keep the retry DECISION")
    proposal = offline_proposal(user, review)
    assert proposal["summary"] == "NEW-SUMMARY about src/f04.rs. Keep the retry DECISION."
    assert (proposal["from_turn"], proposal["to_turn"]) == (2, 9)
    out = user.ok("q", "turns 5-40")
    assert "40" in out and "12" in out, "the refusal names the numbers"
    assert offline_proposal(user, review) == proposal
    proc = user.run("q", "what do you think?")
    assert "No directive found" in proc.stdout and "not a language model" in proc.stderr

    user.ok("conversation", "compact", "--continue", "--yes")
    event = user.event(user.tip(source))
    assert (event["from_turn"], event["to_turn"]) == (1, 8)
    assert event["summary"]["summary"] == proposal["summary"]
    assert user.active() == source
    compacted = user.ok("conversation", "print", "--compacted", source)
    assert "Keep the retry DECISION." in compacted and "<<Q05>>" not in compacted
    assert "<<Q10>>" in compacted

    # a second review of the same source, aborted
    second = start(user, source, "--from", "10", "--to", "11")
    assert second != review
    tip = user.tip(source)
    out = user.ok("conversation", "compact", "--abort")
    assert second in out
    assert user.tip(source) == tip
    assert user.ref(f"refs/archive/conversations/{second}")
    assert user.active() == source
    for flag in ("--continue", "--abort"):
        proc = user.fail("conversation", "compact", flag)
        assert "not a compaction review" in proc.stderr
    assert json.loads(user.ok("--format", "json", "conversation", "ls", "--archived"))
    user.fsck()


def test_an_open_review_blocks_compaction_of_its_source(user: User, tmp_path: Path) -> None:
    source = twelve(user, tmp_path)
    review = start(user, source, "--from", "2", "--to", "9")
    before = user.tip(source)
    for args in (
        ["conversation", "compact", source],
        ["conversation", "compact", source, "--reset"],
        ["conversation", "compact", source, "--from", "2", "--to", "4", "--reasoning"],
        ["q", "--id", source, "-k", "--", "go on"],
    ):
        proc = user.fail(*args)
        assert review in proc.stderr, (args, proc.stderr)
    user.ok("conversation", "compact", source, "--dry-run")
    user.ok("conversation", "use", source)
    proc = user.fail("conversation", "compact", "--interactive")
    assert review in proc.stderr and "jp conversation use" in proc.stderr
    assert user.tip(source) == before
    user.ok("q", "ordinary chat goes on")
    assert user.show(source)["turns"] == 13
    assert len([r for r in user.ls() if r["source_id"] == source]) == 1


def test_the_review_uses_the_model_the_conversation_recorded(user: User) -> None:
    # `q -m` records openai/gpt-test, a provider the user's files never name: as
    # `jp q` answers on it, the review's summary is drafted on it too
    with FakeChat() as chat:
        user.env.update(chat.env())
        for _ in range(2):
            chat.reply_text("ANSWER.", when={"last_user_contains": "question"})
        user.ok("q", "--new", "-m", "openai/gpt-test", "first question")
        user.ok("q", "second question")
        assert [r["model"] for r in chat.requests] == ["gpt-test", "gpt-test"]
        chat.reply_text("DRAFT on the recorded model.", when={"no_tools": True})
        out = user.ok("conversation", "compact", "--interactive", "--from", "1", "--to", "1")
        assert "DRAFT on the recorded model." in out
        assert [r["model"] for r in chat.requests] == ["gpt-test"] * 3
    (config,) = [e for e in user.events(user.active()) if e["type"] == "config_delta"][-1:]
    assert "openai/gpt-test" in json.dumps(config), "the review runs on it as well"


def test_the_start_says_what_each_review_turn_will_send(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    """A big source: before the first review turn, the start names its size, and the
    first turn then sends about that much (and no less)."""
    online.config(CONFIG)
    folder = write_conversation(tmp_path / "17800000402-big", 12, tool_bytes=20_000)
    source = online.import_(folder)
    fake.reply_text("DRAFT", when=SUMMARIZER)
    online.ok("conversation", "use", source)
    out = online.ok("conversation", "compact", "--interactive", "--from", "2", "--to", "9")
    said = [line for line in out.splitlines() if line.startswith("Each turn of this review")]
    assert len(said) == 1 and out.index(said[0]) < out.index("Next:"), out
    tokens = int(said[0].split("about ")[1].split(" tokens")[0].replace(",", ""))
    assert tokens > 20_000  # the tool outputs are in it
    fake.reply_blocks([tool_use("propose_compaction", from_turn=2, to_turn=9, summary="S")],
                      REVIEW)
    fake.reply_text("Recorded.")
    online.ok("q", "tighter please")
    sent = len(json.dumps(fake.requests[-2]["messages"])) // 4
    assert tokens * 0.7 <= sent <= tokens * 1.5 + 2_000, (tokens, sent)


def test_show_of_a_review_is_brief(user: User, tmp_path: Path) -> None:
    """The review's recorded instructions are a line's start and a length, numbers
    have separators, and no parentheses nest; -F json keeps every character."""
    source = twelve(user, tmp_path)
    review = start(user, source)
    shown = user.ok("conversation", "show", review)
    [recorded] = [line for line in shown.splitlines() if line.startswith("Recorded:")]
    whole = user.show(review)["conversation_sets"]
    longest = max((v for v in whole.values() if isinstance(v, str)), key=len)
    assert len(longest) > 200 and longest not in recorded, recorded
    assert f"({len(longest):,} characters)" in recorded and len(recorded) < 400, recorded
    for line in shown.splitlines():
        depth = 0
        for c in line:
            depth += {"(": 1, ")": -1}.get(c, 0)
            assert depth <= 1, f"nested parentheses: {line}"
