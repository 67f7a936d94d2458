"""Several `jp` processes on one conversation at once lose nothing.

The processes are started together (subprocess.Popen) and the store is then
read back with git: every writer that reported success has its turn in the
conversation exactly once and in one piece (no interleaved turns), every one
that did not got an `error:` line saying why, and `git fsck` is clean.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.reliability.harness import ID, RUST, RUST_ID, Conversation, Sandbox, extends

WRITERS = 5


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    sandbox = Sandbox(tmp_path / "box")
    sandbox.ok("init")
    sandbox.ok("conversation", "import", "--activate", str(RUST))
    return sandbox


def wait_all(procs: Sequence[subprocess.Popen[str]]) -> list[tuple[int, str, str]]:
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert "Traceback" not in stderr, stderr
        out.append((proc.returncode, stdout, stderr))
    return out


def assert_clear_failure(code: int, stderr: str) -> None:
    assert code != 0
    assert "error:" in stderr and "internal error" not in stderr, stderr


def turns_of(conv: Conversation, start: int) -> list[list[str]]:
    """The events after ``start`` cut into turns, each as its kinds plus request text."""
    turns: list[list[str]] = []
    for event in conv.events[start:]:
        if event["type"] == "turn_start":
            turns.append([])
        assert turns, f"an event outside a turn: {event['type']}"
        turns[-1].append(event["type"] + ":" + str(event.get("content", "")))
    return turns


def check_turns(conv: Conversation, start: int, won: list[str]) -> None:
    """Each successful writer's turn exactly once, whole and uninterleaved."""
    turns = turns_of(conv, start)
    asked = [t[1].split(":", 1)[1] for t in turns]
    assert sorted(asked) == sorted(won), (asked, won)
    for turn in turns:
        kinds = [k.split(":", 1)[0] for k in turn]
        assert kinds == ["turn_start", "chat_request", "chat_response"], turn


def test_writers_on_one_conversation(box: Sandbox) -> None:
    before = box.conversations()[RUST_ID]
    procs = [box.popen("q", "-i", RUST_ID, f"writer {n}") for n in range(WRITERS)]
    results = wait_all(procs)

    won = []
    for n, (code, _, stderr) in enumerate(results):
        if code == 0:
            won.append(f"writer {n}")
        else:
            assert_clear_failure(code, stderr)
            assert "in use by another jp process" in stderr, stderr
    assert won, "no writer succeeded"
    box.fsck()
    after = box.conversations()[RUST_ID]
    assert extends(before.events, after.events)
    check_turns(after, len(before.events), won)


def test_append_fork_and_archive_at_once(box: Sandbox) -> None:
    before = box.conversations()[RUST_ID]
    commands = [
        ("q", "-i", RUST_ID, "writer 0"),
        ("conversation", "fork", RUST_ID),
        ("q", "-i", RUST_ID, "writer 1"),
        ("conversation", "fork", RUST_ID),
        ("conversation", "archive", RUST_ID, "-y"),
        ("q", "-i", RUST_ID, "writer 2"),
        ("conversation", "fork", RUST_ID),
    ]
    results = wait_all([box.popen(*c) for c in commands])

    won, forks, archived = [], [], False
    for command, (code, stdout, stderr) in zip(commands, results, strict=True):
        if code != 0:
            assert_clear_failure(code, stderr)
            continue
        if command[0] == "q":
            won.append(command[-1])
        elif command[1] == "fork":
            forks += ID.findall(stdout)
        else:
            archived = True
    box.fsck()
    every = box.conversations()
    after = every[RUST_ID]
    assert after.archived == archived
    assert extends(before.events, after.events), "events lost"
    check_turns(after, len(before.events), won)
    chain = box.git("rev-list", after.tip).split()
    for fid in forks:  # each fork sits on a commit of the source's chain, whole
        fork = every[fid]
        start = box.git("rev-list", "--max-count=1", "--first-parent", fork.tip).strip()
        assert fork.kinds[-1] == "conversation_start", fork.kinds[-3:]
        assert fork.events[-1]["forked_from"]["commit"] in chain
        assert start == fork.tip
    assert len(set(forks)) == len(forks), "two forks got one id"


def test_forks_at_once_get_their_own_ids(box: Sandbox) -> None:
    results = wait_all([box.popen("conversation", "fork", RUST_ID) for _ in range(4)])
    made = []
    for code, stdout, stderr in results:
        assert code == 0, stderr  # a taken id is retried, not reported
        made += ID.findall(stdout)
    assert len(set(made)) == 4
    box.fsck()


def start_review(box: Sandbox, source: str) -> str:
    box.ok("conversation", "use", source)
    out = box.ok("conversation", "compact", "--interactive")
    return ID.findall(out)[0]


def test_one_review_continued_twice_at_once(box: Sandbox) -> None:
    rid = start_review(box, RUST_ID)
    before = box.conversations()[RUST_ID]
    results = wait_all([box.popen("conversation", "compact", "--continue", "-y") for _ in range(2)])

    for code, _, stderr in results:
        if code != 0:
            assert_clear_failure(code, stderr)
    assert any(code == 0 for code, _, _ in results)
    box.fsck()
    every = box.conversations()
    applied = every[RUST_ID].kinds[len(before.kinds) :]
    assert applied == ["compaction"], "applied twice, or not at all"
    assert every[rid].archived
    assert box.head() == RUST_ID


def test_two_reviews_continued_at_once(box: Sandbox) -> None:
    other = box.new("a second conversation")
    for n in range(3):
        box.ok("q", "-i", other, f"more {n}")
    first = start_review(box, RUST_ID)
    second = start_review(box, other)
    before = box.conversations()
    procs = []
    for rid in (first, second):  # each holds its review and source, and asks
        box.ok("conversation", "use", rid)
        proc = box.popen("conversation", "compact", "--continue", stdin=True)
        wait_for_prompt(proc)
        procs.append(proc)
    for proc in procs:  # then both apply at once
        assert proc.stdin is not None
        proc.stdin.write("y\n")
        proc.stdin.flush()
    results = wait_all(procs)

    assert [code for code, _, _ in results] == [0, 0], results
    box.fsck()
    every = box.conversations()
    for source, rid in ((RUST_ID, first), (other, second)):
        assert every[source].kinds[len(before[source].kinds) :] == ["compaction"]
        assert every[rid].archived
    assert box.head() in (RUST_ID, other)
    assert box.leftovers() == []


def wait_for_prompt(proc: subprocess.Popen[str]) -> None:
    assert proc.stderr is not None
    seen = ""
    while not seen.endswith("[y/N] "):
        char = proc.stderr.read(1)
        assert char, f"jp ended before asking: {seen}"
        seen += char


def test_archive_and_fork_during_a_turn(box: Sandbox) -> None:
    """A turn runs a slow tool; meanwhile the conversation is forked and archived.
    The turn completes (into the archive), the fork holds the state it saw."""
    from tests.support.fake_messages import FakeMessages

    with FakeMessages() as fake:
        box.env.update(fake.env())
        box.config_file.write_text(
            '[assistant.model]\nid = "anthropic/claude-test"\n'
            "[conversation.tools.slow]\n"
            'command = ["sleep", "1.5"]\ndescription = "Wait a moment"\nconfirm = false\n'
        )
        fake.reply_blocks([{"type": "tool_use", "name": "slow", "input": {}}])
        fake.reply_text("Done waiting.")
        turn = box.popen("q", "-i", RUST_ID, "wait for it")
        deadline = time.monotonic() + 30
        while "tool_call_request" not in box.conversations()[RUST_ID].kinds[-1:]:
            assert time.monotonic() < deadline, "the tool call never arrived"
            time.sleep(0.05)
        fork = ID.findall(box.ok("conversation", "fork", RUST_ID))[0]
        box.ok("conversation", "archive", RUST_ID, "-y")
        ((code, _, stderr),) = wait_all([turn])

    assert code == 0, stderr
    box.fsck()
    every = box.conversations()
    assert every[RUST_ID].archived
    assert every[RUST_ID].kinds[-3:] == ["tool_call_request", "tool_call_response", "chat_response"]
    assert (
        every[fid := fork].events[-1]["forked_from"]["commit"]
        in box.git("rev-list", every[RUST_ID].tip).split()
    ), fid


def test_a_review_that_loses_its_id_takes_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes picked one id in the same decisecond: the review moves on, and
    the source note it wrote first on that id's anchor is put back as it was."""
    from gitstore.events import now_text
    from gitstore.git import refs
    from gitstore.store.core import Store
    from gitstore.store.repo import init_bare
    from porcelain.app.review import start

    init_bare(tmp_path / "s.git")
    store = Store(tmp_path / "s.git")
    source = "jp-c100"
    store.log.create(
        source,
        [{"type": "conversation_start", "timestamp": now_text(), "conversation_id": source}],
        None,
        "test",
    )
    taken = "jp-c200"
    store.log.create(
        taken,
        [{"type": "conversation_start", "timestamp": now_text(), "conversation_id": taken}],
        None,
        "test",
    )
    picks = iter([taken, "jp-c201"])
    monkeypatch.setattr(start, "fresh_id", lambda _store, moment=None: next(picks))
    review = {"source_id": source, "source_commit": store.refs.require(source).tip}
    made = start._publish(store, store.refs.require(source), review, [], "text", "none")
    assert made.review_id == "jp-c201"
    assert store.notes.source_of("jp-c201") == source
    assert store.notes.note(refs.NOTES_SOURCE, taken) is None


def test_an_append_never_overwrites_a_writer_in_between(tmp_path: Path) -> None:
    """Another writer moves the conversation after this append wrote its
    objects and before its ref moves: this one fails, the other's events stay."""
    from gitstore import faults
    from gitstore.errors import StaleTip
    from gitstore.events import now_text
    from gitstore.store.core import Store
    from gitstore.store.repo import init_bare

    init_bare(tmp_path / "s.git")
    mine, other = Store(tmp_path / "s.git"), Store(tmp_path / "s.git")
    start = {"type": "conversation_start", "timestamp": now_text(), "conversation_id": "jp-c1"}
    tip = mine.log.create("jp-c1", [start], None, "test")

    def request(text: str) -> list[dict[str, str]]:
        return [{"type": "chat_request", "timestamp": now_text(), "content": text}]

    def race(point: str) -> None:
        if point == "append:objects-written":
            faults.install(None)
            other.log.append("jp-c1", request("the other writer"), tip, "other")

    faults.install(race)
    try:
        with pytest.raises(StaleTip):
            mine.log.append("jp-c1", request("mine"), tip, "mine")
    finally:
        faults.install(None)
    contents = [e.get("content") for e in Store(tmp_path / "s.git").log.load("jp-c1").events]
    assert contents == [None, "the other writer"]
