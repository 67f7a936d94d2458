"""`jp` killed (SIGKILL) at every stage of every write loses nothing.

Each case copies a prepared store, runs one command with JP_FAULT so that jp
kills itself at a named fault point (gitstore/faults.py), and then checks:

1. `git fsck --strict` is clean on the store exactly as the crash left it;
2. every conversation that existed still reads back (with git alone) as its
   last completed state or a later one: nothing lost, nothing rewritten;
3. the next `jp` command repairs what the crash left half-done (no intent
   journal, no ref lock file remains) and the result is the operation either
   not done or done, never in between;
4. the operation then runs to completion, and `jp q` works afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.reliability.harness import (
    AROUND,
    ID,
    RUST,
    RUST_ID,
    Conversation,
    Others,
    Sandbox,
    extends,
)

WITH_COMPACTION = RUST.parent / "17800000103-with-compaction"
Store = dict[str, Conversation]


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    """The Rust fixture conversation (8 turns), imported and active."""
    box = Sandbox(tmp_path_factory.mktemp("plain") / "box")
    box.ok("init")
    box.ok("conversation", "import", "--activate", str(RUST))
    return box


@pytest.fixture(scope="module")
def review(plain: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    """``plain`` with an open compaction review of it (the review is active)."""
    box = plain.copy(tmp_path_factory.mktemp("review") / "box")
    box.ok("conversation", "compact", "--interactive")
    return box


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Callable[[Sandbox], Sandbox]]:
    count = 0

    def make(template: Sandbox) -> Sandbox:
        nonlocal count
        count += 1
        return template.copy(tmp_path / f"box{count}")

    yield make


# -- what each operation may leave ------------------------------------------------------


def unchanged_or_extended(before: Store, now: Store) -> None:
    """Every conversation of ``before`` is still there with all its events."""
    for cid, old in before.items():
        assert cid in now, f"{cid} disappeared"
        assert extends(old.events, now[cid].events), f"{cid} lost or rewrote events"


def new_ones(before: Store, now: Store) -> list[Conversation]:
    made = [c for cid, c in now.items() if cid not in before]
    for conv in made:
        start = [e for e in conv.events if e.get("type") == "conversation_start"][-1]
        assert start["conversation_id"] == conv.cid, "a creation event names another id"
    return made


def check_append(before: Store, now: Store) -> str:
    """A query: the turn is absent, or its request is kept, or it is complete."""
    unchanged_or_extended(before, now)
    assert not new_ones(before, now)
    extra = now[RUST_ID].kinds[len(before[RUST_ID].kinds) :]
    assert extra in (
        [],
        ["turn_start", "chat_request"],
        ["turn_start", "chat_request", "chat_response"],
    ), extra
    return "old" if not extra else "new"


def check_compact_query(before: Store, now: Store) -> str:
    """`q -k`: the compaction and then the turn, each whole or absent."""
    unchanged_or_extended(before, now)
    extra = now[RUST_ID].kinds[len(before[RUST_ID].kinds) :]
    assert extra[:1] in ([], ["compaction"]), extra
    assert extra[1:] in (
        [],
        ["turn_start", "chat_request"],
        ["turn_start", "chat_request", "chat_response"],
    ), extra
    return "old" if not extra else "new"


def check_compaction(before: Store, now: Store) -> str:
    unchanged_or_extended(before, now)
    extra = now[RUST_ID].kinds[len(before[RUST_ID].kinds) :]
    assert extra in ([], ["compaction"]), extra
    return "old" if not extra else "new"


def check_create(before: Store, now: Store) -> str:
    """Fork or import: no new conversation, or one whole new conversation."""
    unchanged_or_extended(before, now)
    for cid, old in before.items():
        assert now[cid].tip == old.tip, f"{cid} moved"
    made = new_ones(before, now)
    assert len(made) <= 1, [c.cid for c in made]
    return "new" if made else "old"


def check_retry(before: Store, now: Store) -> str:
    """`q --retry` of an answered request: the source stays as it was; a fork at the
    request is absent, or whole (its creation, then perhaps the new answer)."""
    unchanged_or_extended(before, now)
    assert now[RUST_ID].tip == before[RUST_ID].tip, "the answered conversation moved"
    made = new_ones(before, now)
    assert len(made) <= 1, [c.cid for c in made]
    if made:
        tail = made[0].kinds[made[0].kinds.index("conversation_start", 1) :]
        assert tail in (["conversation_start"], ["conversation_start", "chat_response"]), tail
    return "new" if made else "old"


def check_archive(before: Store, now: Store) -> str:
    unchanged_or_extended(before, now)
    assert now[RUST_ID].tip == before[RUST_ID].tip
    return "new" if now[RUST_ID].archived else "old"


def check_review_start(before: Store, now: Store) -> str:
    unchanged_or_extended(before, now)
    assert now[RUST_ID].tip == before[RUST_ID].tip, "the source moved"
    made = new_ones(before, now)
    assert len(made) <= 1
    if made:  # a review is published whole: creation, config, opening proposal
        kinds = made[0].kinds[len(before[RUST_ID].kinds) :]
        assert kinds[0] == "conversation_start" and kinds[-1] == "tool_call_response", kinds
    return "new" if made else "old"


def review_ids(before: Store) -> tuple[str, str]:
    rid = next(cid for cid in before if cid != RUST_ID)
    return rid, RUST_ID


def check_continue(before: Store, now: Store) -> str:
    """--continue: the source compacted and the review archived, or neither."""
    unchanged_or_extended(before, now)
    rid, sid = review_ids(before)
    applied = now[sid].kinds[len(before[sid].kinds) :]
    assert applied in ([], ["compaction"]), applied
    assert now[rid].tip == before[rid].tip
    assert bool(applied) == now[rid].archived, "half-applied: source and review disagree"
    return "new" if applied else "old"


def check_abort(before: Store, now: Store) -> str:
    unchanged_or_extended(before, now)
    rid, sid = review_ids(before)
    assert now[sid].tip == before[sid].tip
    return "new" if now[rid].archived else "old"


@dataclass(frozen=True)
class Case:
    template: str
    command: tuple[str, ...]
    fault: str
    check: Callable[[Store, Store], str]
    expect: str  # what the state reads as after the repair: "old" or "new"

    def __str__(self) -> str:
        words = [w if "/" not in w else "FILE" for w in self.command[:3]]  # no checkout path
        return f"{' '.join(words)}@{self.fault}"


Q = ("q", "after the crash")
FORK = ("conversation", "fork", RUST_ID)
IMPORT = ("conversation", "import", str(WITH_COMPACTION))
COMPACT = ("conversation", "compact", "--turn", "2..4", "--summarize", "-y")
QK = ("q", "--compact=s:2..4", "--", "compact then ask")
ARCHIVE = ("conversation", "archive", RUST_ID, "-y")
QA = ("q", "-a", str(RUST / "metadata.json"), "-s", "be brief", "--", "with an attachment")
PIXEL = Path(__file__).parents[1] / "support" / "media" / "pixel.png"
QI = ("q", "-s", "look", "-a", str(PIXEL), "--", "with an image")
RETRY = ("q", "--retry")
START = ("conversation", "compact", "--interactive")
CONTINUE = ("conversation", "compact", "--continue", "-y")
ABORT = ("conversation", "compact", "--abort")

CASES = [
    Case("plain", Q, "append:objects-written@1", check_append, "old"),
    Case("plain", Q, "model:streaming@2", check_append, "new"),
    Case("plain", Q, "append:objects-written@2", check_append, "new"),
    Case("plain", QA, "append:objects-written@1", check_append, "old"),
    Case("plain", QA, "append:objects-written@2", check_append, "new"),
    Case("plain", QI, "append:objects-written@1", check_append, "old"),
    Case("plain", QI, "append:objects-written@2", check_append, "new"),
    Case("plain", RETRY, "create:objects-written", check_retry, "old"),
    Case("plain", RETRY, "model:streaming@2", check_retry, "new"),
    Case("plain", FORK, "create:objects-written", check_create, "old"),
    Case("plain", FORK, "notes:objects-written", check_create, "new"),
    Case("plain", IMPORT, "create:objects-written", check_create, "old"),
    Case("plain", IMPORT, "notes:objects-written", check_create, "new"),
    Case("plain", COMPACT, "append:objects-written", check_compaction, "old"),
    Case("plain", QK, "append:objects-written@1", check_compact_query, "old"),
    Case("plain", QK, "append:objects-written@2", check_compact_query, "new"),
    Case("plain", ARCHIVE, "move:journal-written", check_archive, "old"),
    Case("plain", ARCHIVE, "move:locked", check_archive, "old"),
    Case("plain", ARCHIVE, "move:committed", check_archive, "new"),
    Case("plain", START, "notes:objects-written", check_review_start, "old"),
    Case("plain", START, "create:objects-written", check_review_start, "old"),
    Case("review", CONTINUE, "move:journal-written", check_continue, "old"),
    Case("review", CONTINUE, "move:locked", check_continue, "old"),
    Case("review", CONTINUE, "move:committed", check_continue, "new"),
    Case("review", CONTINUE, "notes:objects-written", check_continue, "new"),
    Case("review", ABORT, "move:locked", check_abort, "old"),
    Case("review", ABORT, "move:committed", check_abort, "new"),
]


@pytest.mark.parametrize("around", AROUND)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_killed_at_a_fault_point(
    case: Case,
    around: str,
    request: pytest.FixtureRequest,
    fresh: Callable[[Sandbox], Sandbox],
) -> None:
    box = fresh(request.getfixturevalue(case.template))
    before = box.conversations()
    others = Others(box, around)

    with others.running():
        box.kill(case.fault, *case.command)

    box.fsck()
    crashed = box.conversations()
    case.check(before, crashed)  # nothing lost, even before any repair

    if case.fault.startswith("move:locked"):
        box.settle()  # ref locks of a killed writer become stale for repair
    with others.running():
        box.ok("conversation", "ls")  # the next command repairs
    assert box.leftovers() == others.planted, "a journal or ref lock survived the next command"
    box.fsck()
    repaired = box.conversations()
    assert case.check(before, repaired) == case.expect

    finish_and_use(box, case, before, repaired, others)


def finish_and_use(
    box: Sandbox, case: Case, before: Store, repaired: Store, others: Others | None = None
) -> None:
    """The interrupted operation completes when run again; then a query works."""
    others = others or Others(box, "alone")
    with others.running():
        if case.check(before, repaired) == "old":
            box.ok(*case.command)
            assert case.check(before, box.conversations()) == "new"
        elif case.command in (CONTINUE,):
            # the review stands archived; a rerun says there is nothing to finish
            box.fail(*case.command)
    box.fsck()
    with others.running():
        target = RUST_ID if not box.conversations()[RUST_ID].archived else None
        if target is None:
            box.ok("conversation", "unarchive", RUST_ID)
        box.ok("q", "-i", RUST_ID, "and now?")
    last = box.conversations()[RUST_ID].kinds[-3:]
    assert last == ["turn_start", "chat_request", "chat_response"], last
    assert box.leftovers() == others.planted


def test_a_killed_import_can_be_imported_again(
    fresh: Callable[[Sandbox], Sandbox], plain: Sandbox
) -> None:
    """Killed before its ref: the import keeps its JP id on the rerun."""
    box = fresh(plain)
    box.kill("create:objects-written", *IMPORT)
    out = box.ok(*IMPORT)
    assert ID.findall(out) == ["jp-c17800000103"]


# -- pull ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def puller(plain: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    """A desktop that pulled the Rust conversation; since then the laptop went on
    with it, started another, forked and archived one, and pushed."""
    base = tmp_path_factory.mktemp("pull")
    remote = base / "remote.git"
    laptop = plain.copy(base / "laptop")
    laptop.git("init", "--bare", "-q", str(remote))
    laptop.ok("remote", "add", "origin", str(remote))
    laptop.ok("push", "origin")
    desktop = Sandbox(base / "desktop")
    desktop.ok("init")
    desktop.ok("remote", "add", "origin", str(remote))
    desktop.ok("pull", "origin")
    laptop.ok("q", "from the laptop")
    laptop.new("a new one on the laptop")
    fork = ID.findall(laptop.ok("conversation", "fork", RUST_ID))[0]
    laptop.ok("conversation", "archive", fork, "-y")
    laptop.ok("push", "origin")
    return desktop


@pytest.mark.parametrize(
    "fault",
    [
        "move:journal-written@1",
        "move:locked@1",
        "move:committed@1",
        "move:locked@2",
        "move:committed@2",
    ],
)
@pytest.mark.parametrize("around", AROUND)
def test_killed_pull(
    fault: str, around: str, puller: Sandbox, fresh: Callable[[Sandbox], Sandbox]
) -> None:
    done = fresh(puller)
    done.ok("pull", "origin")
    after = done.conversations()
    box = fresh(puller)
    before = box.conversations()
    others = Others(box, around)

    with others.running():
        box.kill(fault, "pull", "origin")

    box.fsck()
    unchanged_or_extended(before, box.conversations())
    if fault.startswith("move:locked"):
        box.settle()
    with others.running():
        box.ok("conversation", "ls")
    assert box.leftovers() == others.planted
    now = box.conversations()
    for cid, conv in now.items():  # each conversation: as it was, or as pulled
        allowed = {after[cid].ref_tip()} | ({before[cid].ref_tip()} if cid in before else set())
        assert conv.ref_tip() in allowed, cid
    with others.running():
        box.ok("pull", "origin")
    assert {c: v.ref_tip() for c, v in box.conversations().items()} == {
        c: v.ref_tip() for c, v in after.items()
    }
    box.fsck()
    box.ok("q", "-i", RUST_ID, "and now?")


def test_the_fault_hook_refuses_unknown_points() -> None:
    from porcelain.app.faults import parse
    from porcelain.errors import UsageError

    assert parse("move:locked@2:kill") == ("move:locked", 2, "kill")
    assert parse("append:objects-written") == ("append:objects-written", 1, "kill")
    for bad in ("bogus", "move:locked@0", "move:locked@x", ""):
        with pytest.raises(UsageError):
            parse(bad)
