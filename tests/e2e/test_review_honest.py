"""The offline review says what happened, once, and what a proposal costs: the turns an
earlier compaction summarized are checked, a proposal that saves nothing or grows the
model's context says so everywhere, and the offline model's explanations stay off the
stored history."""

from __future__ import annotations

from tests.e2e.harness import OWN, User

COMPACTED = OWN / "17800000103-with-compaction"  # turns 2-8 stand summarized
GROWN = "Warning: this proposal makes the model's context larger"


def review(user: User, *flags: str) -> str:
    source = user.import_(COMPACTED)
    user.ok("conversation", "use", source)
    return user.ok("conversation", "compact", "--interactive", *flags)


def test_a_summary_replacing_an_earlier_one_is_checked_against_it(user: User) -> None:
    review(user)
    proc = user.run("q", "summary: Nothing to keep.")
    assert proc.returncode == 0, proc.stderr
    assert "Turns 2-8: summarized earlier" in proc.stderr, "the report says how 2-8 were checked"
    coverage = user.show()["proposal"]["coverage"]
    assert coverage["earlier_summaries"] == [{"from_turn": 2, "to_turn": 8}]
    turns = {m["turn"] for m in coverage["missing"]}
    assert turns & set(range(2, 9)), f"nothing reported from turns 2-8: {coverage['missing']}"
    texts = [m["text"] for m in coverage["missing"]]
    assert "test_void_invoice" in texts, "the earlier summary named it; the new one drops it"
    assert len(texts) == len(set(texts)), "a fact is listed once"
    shown = user.ok("conversation", "show")
    assert "Turns 2-8: summarized earlier" in shown


def test_one_note_per_thing_and_turn_n(user: User) -> None:
    review(user)
    out = user.ok("q", "strip reasoning")
    assert "Note: dropped the summary" in out
    assert "wrote the summary again" not in out, "the summary was dropped, not written"
    out = user.ok("q", "turns 1-1")
    assert "turns 1-1" not in out and "Understood: turn 1." in out
    assert "Proposing turn 1" in out
    log = user.ok("conversation", "compact", "--log")
    assert "turns 1-1" not in log
    source = user.show()["source_id"]
    user.ok("q", "summary: the first turn, in short")  # a summary of one turn, not a strip
    user.ok("conversation", "compact", "--continue", "--yes")
    printed = user.ok("conversation", "print", "--compacted", source)
    assert "--- turn 1 (" in printed and "turns 1-1" not in printed


def test_a_proposal_that_grows_the_context_says_so_up_to_continue(user: User) -> None:
    started = review(user, "--from", "2", "--to", "8")
    assert GROWN in started, "the opening draft is longer than the summary it replaces"
    proc = user.run("q", "turns 2-8")
    assert GROWN in proc.stdout, "the model's own answer does not tell you to apply it"
    assert "Apply it with" not in proc.stdout
    assert GROWN in proc.stderr, "the recorded proposal carries the warning"
    assert GROWN in user.ok("conversation", "show")
    proc = user.run("conversation", "compact", "--continue", input="n\n")
    assert GROWN in proc.stdout + proc.stderr, "the --continue prompt repeats it"


def test_the_offline_explanations_are_not_stored(user: User) -> None:
    review(user)
    proc = user.run("q", "what do you think of it?")
    assert proc.returncode == 0, proc.stderr
    assert "keep the last 3" in proc.stderr, "the directives are explained on stderr"
    assert "keep the last 3" not in proc.stdout
    answer = user.events(user.active())[-1]
    assert answer["type"] == "chat_response"
    assert "No directive found" in answer["message"] and "keep the last" not in answer["message"]
    user.ok("conversation", "compact", "--abort")
    user.ok("q", "--new", "hello there")
    stored = user.events(user.active())[-1]["message"]
    assert "ANTHROPIC_API_KEY" not in stored and "hello there" not in stored
    user.ok("q", "and again")
    user.ok("q", "and once more")
    user.ok("conversation", "compact", "--from", "1", "--to", "2", "--yes")
    summary = [e for e in user.events(user.active()) if e["type"] == "compaction"]
    assert summary and "ANTHROPIC_API_KEY" not in str(summary[-1]), "a summary quoted boilerplate"
