"""A rewound Claude Code session (one conversation per branch) under faults: the import
killed at each write, beside a looping `git gc`, and stored branches that were tampered
with (say, pulled from a remote) before an export."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from porcelain.jpformat import claude_code
from tests.reliability.harness import Conversation, Sandbox
from tests.reliability.test_sessions_faults import big_session, kept, lines_of, origin

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "claude-code-rewind"
PROJECT = "-home-me-haiku"
MAIN = f"{PROJECT}/7c2e4d10-2222-4b3c-8d4e-000000000002.jsonl"


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    sandbox = Sandbox(tmp_path / "box")
    sandbox.ok("init")
    return sandbox


def own(conv: Conversation) -> list[dict[str, Any]]:
    """The records of a branch conversation's own events (after its start)."""
    starts = [i for i, e in enumerate(conv.events) if e.get("type") == "conversation_start"]
    return kept(Conversation(conv.cid, conv.ref, conv.tip, conv.events[starts[-1] + 1 :]))


def branches(box: Sandbox) -> dict[int, Conversation]:
    """The conversations of the session by branch (0: the session's own)."""
    out: dict[int, Conversation] = {}
    for conv in box.conversations().values():
        found = origin(conv) or {}
        if found.get("path") == MAIN:
            rewind = found.get("rewind")
            branch = 0 if rewind is None else rewind["record"]
            assert branch not in out, f"branch {branch} imported twice"
            out[branch] = conv
    return out


def expected(path: Path) -> dict[int, list[dict[str, Any]]]:
    """The records of each branch of a file, by its first record (1-based; 0: the first)."""
    recs = lines_of(path)
    mapped = claude_code.map_records(recs)
    firsts = [0, *(f.first + 1 for f in mapped.forks)]
    out: dict[int, list[dict[str, Any]]] = {first: [] for first in firsts}
    for record, branch in zip(recs, mapped.branch_of, strict=True):
        out[firsts[branch]].append(record)
    return out


def rewound_root(tmp: Path, count: int) -> Path:
    """A root with the rewound fixture and, after a long session, a rewind in it."""
    root = tmp / "projects"
    shutil.copytree(FIXTURES, root)
    path = big_session(root, count)
    last = f"u{count - 1}"
    with open(path, "a", encoding="utf-8") as handle:
        for uuid, parent in (("went-on", last), ("rewound", last)):
            record = {"type": "user", "sessionId": "big", "uuid": uuid, "parentUuid": parent}
            record |= {"timestamp": "2026-03-02T00:00:00.000Z"}
            handle.write(json.dumps({**record, "message": {"content": f"{uuid} prompt"}}) + "\n")
    return root


def check(box: Sandbox, root: Path, complete: bool) -> None:
    want = expected(root / MAIN)
    for first, conv in branches(box).items():
        got = kept(conv) if first == 0 else own(conv)
        assert got == want[first], f"branch {first} is half-imported"
    if complete:
        assert set(branches(box)) == set(want)


@pytest.mark.parametrize("fault", ["create:objects-written@1", "create:objects-written@2"])
def test_a_rewound_import_killed_at_each_write_is_completed_by_the_next(
    box: Sandbox, tmp_path: Path, fault: str
) -> None:
    root = tmp_path / "projects"
    shutil.copytree(FIXTURES, root)
    box.kill(fault, "conversation", "import", "--from", "claude-code", str(root))
    box.fsck()
    check(box, root, complete=False)
    box.ok("conversation", "import", "--from", "claude-code", str(root))
    box.fsck()
    check(box, root, complete=True)
    out = tmp_path / "out"
    (main,) = [c for b, c in branches(box).items() if b == 0]
    box.ok("conversation", "export", "--to", "claude-code", main.cid, "-o", str(out))
    assert lines_of(out / MAIN) == lines_of(root / MAIN)


def test_a_branch_append_killed_before_its_ref_moves_is_done_by_the_next_import(
    box: Sandbox, tmp_path: Path
) -> None:
    root = tmp_path / "projects"
    shutil.copytree(FIXTURES, root)
    box.ok("conversation", "import", "--from", "claude-code", str(root))
    before = {b: c.tip for b, c in branches(box).items()}
    with open(root / MAIN, "a", encoding="utf-8") as handle:
        record = {"type": "user", "uuid": "r-012", "parentUuid": "r-011"}
        record |= {"timestamp": "2026-02-12T09:10:00.000Z", "message": {"content": "More."}}
        handle.write(json.dumps(record) + "\n")
    box.kill("append:objects-written", "conversation", "import", "--from", "claude-code", str(root))
    assert {b: c.tip for b, c in branches(box).items()} == before
    box.ok("conversation", "import", "--from", "claude-code", str(root))
    check(box, root, complete=True)


def test_git_gc_looping_beside_a_rewound_import_breaks_nothing(
    box: Sandbox, tmp_path: Path
) -> None:
    root = rewound_root(tmp_path, 1500)
    stop = threading.Event()
    rounds = [0]

    def maintain() -> None:
        while not stop.is_set():
            subprocess.run(
                ["git", "--git-dir", str(box.store), "gc", "--quiet"],
                env=box.env,
                capture_output=True,
            )
            rounds[0] += 1

    gc = threading.Thread(target=maintain, daemon=True)
    gc.start()
    try:
        box.ok("conversation", "import", "--from", "claude-code", str(root))
        with open(root / MAIN, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"type": "summary", "summary": "more"}) + "\n")
        box.ok("conversation", "import", "--from", "claude-code", str(root))
    finally:
        stop.set()
        gc.join(timeout=120)
    assert rounds[0] > 0
    box.fsck()
    check(box, root, complete=True)
    big = [c for c in box.conversations().values() if (origin(c) or {}).get("rewind")]
    assert len(big) == 2, "the long session's rewind is a branch too"


def test_an_export_refuses_branches_that_do_not_fit(box: Sandbox, tmp_path: Path) -> None:
    """A branch whose records name places outside the session (tampered with, or pulled)."""
    root = tmp_path / "projects"
    shutil.copytree(FIXTURES, root)
    box.ok("conversation", "import", "--from", "claude-code", str(root))
    fork = next(c for b, c in branches(box).items() if b)
    last = dict(fork.events[-1])
    last["metadata"] = {**last["metadata"], "source_index": 10_000}
    blob = box.git("hash-object", "-w", "--stdin", input=json.dumps(last, sort_keys=True) + "\n")
    tree = box.git("mktree", input=f"100644 blob {blob.strip()}\tevent.json\n").strip()
    parent = box.git("rev-parse", f"{fork.tip}^").strip()
    commit = box.git("commit-tree", tree, "-p", parent, "-m", "event: tampered").strip()
    box.git("update-ref", fork.ref, commit)
    out = tmp_path / "out"
    proc = box.fail("conversation", "export", "--to", "claude-code", fork.cid, "-o", str(out))
    assert "placed outside the session" in proc.stderr and "Traceback" not in proc.stderr
    assert not (out / MAIN).exists()
