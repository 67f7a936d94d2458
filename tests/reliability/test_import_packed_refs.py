"""An import of 100 conversations or more creates their refs straight into
``packed-refs`` in one rewrite (``store/batch.py``, ``refs/bulk.py``): no loose
file per ref.  Killed at each step of that rewrite, the store is whole (every
conversation absent or complete, git's fsck clean, no lock left after the next
command) and the next import finishes the rest; beside a looping `git gc` and
`git pack-refs`, nothing is lost; `jp undo` takes every ref back."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.reliability.harness import Sandbox
from tests.support.background import repeating
from tests.support.jpfolders import small_jp_folders

COUNT = 120  # over the batch's threshold (store/batch.py PACKED_AT)
FIRST = 17727392000


def _folders(root: Path, count: int = COUNT) -> list[str]:
    made = small_jp_folders(root, count, "packed", FIRST, "2026-03-02", "a{n}", activated=False)
    return [str(f) for f in made]


def _whole(box: Sandbox) -> dict[str, list[str]]:
    """Every conversation of the store (read with git alone), as its request texts."""
    out = {}
    for cid, conv in box.conversations().items():
        texts = [str(e.get("content")) for e in conv.events if e.get("type") == "chat_request"]
        out[cid] = texts
    return out


def _expected() -> dict[str, list[str]]:
    return {f"jp-c{FIRST + n}": [f"q{n}"] for n in range(COUNT)}


def _loose(box: Sandbox) -> list[Path]:
    return [p for p in (box.store / "refs" / "conversations").rglob("*") if p.is_file()]


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    sandbox = Sandbox(tmp_path / "box")
    sandbox.ok("init")
    return sandbox


def test_many_refs_go_into_packed_refs_and_undo_takes_them_back(
    box: Sandbox, tmp_path: Path
) -> None:
    folders = _folders(tmp_path / "in")
    box.ok("conversation", "import", *folders)
    assert _whole(box) == _expected()
    assert not _loose(box), "a loose ref file per conversation"
    packed = (box.store / "packed-refs").read_text()
    assert all(f"refs/conversations/{cid}\n" in packed for cid in _expected())
    assert not (box.store / "packed-refs.lock").exists()
    box.fsck()
    titles = {r["id"]: r["title"] for r in box.json("conversation", "ls", "--all")}
    assert titles == {f"jp-c{FIRST + n}": f"packed {n}" for n in range(COUNT)}
    box.ok("undo")
    assert _whole(box) == {}
    box.fsck()
    box.ok("conversation", "import", *folders)
    assert _whole(box) == _expected(), "after the undo the same ids are free again"


@pytest.mark.parametrize("fault", ["packed:locked", "packed:written", "packed:renamed"])
def test_an_import_killed_in_the_rewrite_leaves_whole_conversations(
    box: Sandbox, tmp_path: Path, fault: str
) -> None:
    folders = _folders(tmp_path / "in")
    box.kill(fault, "conversation", "import", *folders)
    box.fsck()
    found = _whole(box)
    assert set(found) in (set(), set(_expected())), "some of the refs and not the others"
    assert all(found[cid] == texts for cid, texts in _expected().items() if cid in found)
    box.ok("conversation", "import", *folders)
    assert _whole(box) == _expected()
    assert not (box.store / "packed-refs.lock").exists(), "the killed writer's lock is left"
    assert not list((box.store / "jp" / "ops").glob("*.packed"))
    box.fsck()


def test_git_gc_and_pack_refs_looping_beside_an_import_lose_nothing(
    box: Sandbox, tmp_path: Path
) -> None:
    folders = _folders(tmp_path / "in")
    gc = ["git", "--git-dir", str(box.store), "gc", "--quiet"]
    pack = ["git", "--git-dir", str(box.store), "pack-refs", "--all"]
    with repeating(gc, box.env) as gcs, repeating(pack, box.env) as packs:
        box.ok("conversation", "import", *folders[:60])  # fewer: git's update-ref
        box.ok("conversation", "import", *folders)
    assert gcs[0] > 0 and packs[0] > 0
    assert _whole(box) == _expected()
    done = subprocess.run(
        ["git", "--git-dir", str(box.store), "for-each-ref", "refs/conversations/"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert len(done.stdout.splitlines()) == COUNT
    box.fsck()


def test_a_packed_refs_lock_held_past_the_wait_leaves_the_refs_to_git(
    box: Sandbox, tmp_path: Path
) -> None:
    # git's own lock (a gc packing refs that never ends): waited for, then the refs
    # are created through `git update-ref` as loose files, each with its reflog
    lock = box.store / "packed-refs.lock"
    lock.write_text("")
    box.ok("conversation", "import", *_folders(tmp_path / "in"))
    assert lock.exists(), "another's lock was taken away"
    lock.unlink()
    assert _whole(box) == _expected()
    assert len(_loose(box)) == COUNT
    box.fsck()
