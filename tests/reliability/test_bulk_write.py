"""Bulk writes (imports) go into packs: the same commits as one event at a time,
nothing loose, nothing left behind when interrupted, no ref moved before the
packs are complete."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pygit2
import pytest

from gitstore import Identity, Store, faults
from gitstore.events import format_time, parse_time
from gitstore.git import refs
from gitstore.store import packwrite
from gitstore.store.parts import log as store_module
from gitstore.store.repo import init_bare
from porcelain.jpformat import JpConversation, write_conversation
from tests.reliability.harness import ID, Sandbox

EVENTS = 3000  # past store.PACK_AT: an import of this many goes into a pack
FOLDER_ID = "17800000500"
ODD = Identity(" Dr. O'Neil, Jr.; ", "  ops@example.invalid ")  # libgit2 trims its own way


def events(count: int) -> list[dict[str, Any]]:
    """Turns with tool calls, reasoning, unicode and a compaction."""
    moment = parse_time("2026-02-01T08:00:00.000000Z")
    out: list[dict[str, Any]] = []
    n = 0
    while len(out) < count:
        n += 1
        stamp = format_time(moment.replace(second=n % 60, minute=(n // 60) % 60))
        call = f"call-{n}"
        out += [
            {"type": "turn_start", "timestamp": stamp},
            {"type": "chat_request", "timestamp": stamp, "content": f"Frage {n}: größer? ✓"},
            {"type": "chat_response", "timestamp": stamp, "reasoning": f"thinking {n}"},
            {
                "type": "tool_call_request",
                "timestamp": stamp,
                "id": call,
                "name": "read_file",
                "arguments": {"path": f"src/{n}.rs"},
            },
            {
                "type": "tool_call_response",
                "timestamp": stamp,
                "id": call,
                "content": f"fn main() {{ {n} }}",
                "is_error": False,
            },
            {"type": "chat_response", "timestamp": stamp, "message": f"Answer {n}\n\nwith lines"},
        ]
    return out[:count]


def loose_objects(gitdir: Path) -> list[str]:
    return [
        f"{d.name}/{f.name}"
        for d in (gitdir / "objects").iterdir()
        if len(d.name) == 2 and d.is_dir()
        for f in d.iterdir()
    ]


def packs(gitdir: Path) -> list[str]:
    return sorted(p.name for p in (gitdir / "objects" / "pack").iterdir())


def leftovers(gitdir: Path) -> list[str]:
    top = packwrite.folder(gitdir)
    return sorted(str(p.relative_to(gitdir)) for p in top.rglob("*")) if top.exists() else []


@pytest.fixture
def two(tmp_path: Path) -> tuple[Store, Store]:
    """Two empty stores with one odd identity (libgit2 trims signatures its own way)."""
    made = []
    for name in ("packed.git", "loose.git"):
        init_bare(tmp_path / name)
        made.append(Store(tmp_path / name, ODD))
    return made[0], made[1]


def _chain() -> list[dict[str, Any]]:
    start = {
        "type": "conversation_start",
        "timestamp": events(1)[0]["timestamp"],
        "conversation_id": "jp-c1",
    }
    return [start, *events(EVENTS)]


@pytest.fixture(scope="module")
def one_by_one(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The chain written one event a time into a store of ``two``'s identity (built once:
    each chunk size is compared with the same commits): its path and commit ids."""
    path = tmp_path_factory.mktemp("one-by-one") / "loose.git"
    init_bare(path)
    loose = Store(path, ODD)
    chain = _chain()
    last = loose.log.create("jp-c1", chain[:1], None, "create")
    ids = [last]
    for event in chain[1:]:
        last = loose.log.append("jp-c1", [event], last, "append")
        ids.append(last)
    return path, ids


# the default chunk, and a small odd one: many packs, a chain boundary inside each
@pytest.mark.parametrize("chunk", [packwrite.CHUNK, 293])
def test_packed_commits_are_the_commits_written_one_by_one(
    two: tuple[Store, Store],
    one_by_one: tuple[Path, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    chunk: int,
) -> None:
    packed, _ = two
    monkeypatch.setattr(packwrite, "CHUNK", chunk)
    chain = _chain()
    tip = packed.log.create("jp-c1", chain, None, "import")
    anchor = packed.notes.anchor("jp-c1")
    assert loose_objects(packed.gitdir) == [f"{anchor[:2]}/{anchor[2:]}"], "commits went loose"
    assert len(packs(packed.gitdir)) == 2 * -(-len(chain) // chunk)  # a .pack and an .idx each

    loose, ids = one_by_one
    assert tip == ids[-1], "the packed chain differs from the one written event by event"
    assert packed.log.load("jp-c1").commits == ids
    assert Store(packed.path).log.load("jp-c1").events == Store(loose).log.read_chain(tip)[0]
    proc = subprocess.run(
        ["git", "--git-dir", str(packed.path), "fsck", "--strict", "--no-dangling"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_an_interrupted_bulk_write_leaves_nothing(
    two: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    packed, _ = two
    monkeypatch.setattr(packwrite, "CHUNK", 500)
    before = packs(packed.gitdir)
    seen = 0

    def ctrl_c_at_the_third_chunk(name: str) -> None:
        nonlocal seen
        if name == "pack:chunk-written":
            seen += 1
            assert leftovers(packed.gitdir), "no temporary pack while writing"
            if seen == 3:
                raise KeyboardInterrupt

    faults.install(ctrl_c_at_the_third_chunk)
    with pytest.raises(KeyboardInterrupt):
        packed.log.create("jp-c1", events(EVENTS), None, "import")
    faults.install(None)
    assert seen == 3
    assert packs(packed.gitdir) == before, "an interrupted bulk write published a pack"
    assert loose_objects(packed.gitdir) == [] and leftovers(packed.gitdir) == []
    assert packed.refs.target(refs.live("jp-c1")) is None


def test_a_killed_writers_temporary_packs_go_with_the_next_store(tmp_path: Path) -> None:
    init_bare(tmp_path / "s.git")
    store = Store(tmp_path / "s.git")
    dead = packwrite.folder(store.gitdir) / "12345-deadbeef"
    dead.mkdir(parents=True)
    (dead / "owner").write_text("")
    (dead / "chunk-0.pack").write_bytes(b"PACK partial")
    Store(store.path)
    assert leftovers(store.gitdir) == []


# -- through jp --------------------------------------------------------------------------


def jp_folder(root: Path, count: int) -> Path:
    folder = root / f"{FOLDER_ID}-a-long-import"
    write_conversation(
        folder,
        JpConversation(
            jp_id=FOLDER_ID,
            title="a long import",
            metadata={"title": "a long import", "last_activated_at": events(1)[0]["timestamp"]},
            events=events(count),
        ),
    )
    return folder


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Sandbox, Path]:
    root = tmp_path_factory.mktemp("bulk")
    box = Sandbox(root / "box")
    box.ok("init")
    return box, jp_folder(root, EVENTS)


def test_an_import_is_packed_and_identical_to_appends(
    template: tuple[Sandbox, Path], tmp_path: Path
) -> None:
    origin, folder = template
    box = origin.copy(tmp_path / "box")
    cid = ID.findall(box.ok("conversation", "import", str(folder)))[0]
    tip = box.refs()[refs.live(cid)]
    commits = {c[:2] + "/" + c[2:] for c in box.git("rev-list", tip).split()}
    loose = loose_objects(box.store)  # the anchor blob and the metadata note's objects
    assert len(loose) < 10 and not commits & set(loose), "an import left its events loose"
    chain = box.events(tip)
    assert len(chain) == EVENTS + 1

    init_bare(tmp_path / "again.git")  # the same events, one append each
    again = Store(
        tmp_path / "again.git",
        Identity(box.env["GIT_COMMITTER_NAME"], box.env["GIT_COMMITTER_EMAIL"]),
    )
    last = again.log.create(cid, chain[:1], None, "create")
    for event in chain[1:]:
        last = again.log.append(cid, [event], last, "append")
    assert last == tip, "an imported conversation differs from the same one appended"


@pytest.mark.parametrize("how", ["int", "term", "kill"])
def test_an_interrupted_import_leaves_nothing(
    template: tuple[Sandbox, Path], tmp_path: Path, how: str
) -> None:
    """Interrupted after its pack is written: no pack published, no loose object,
    no ref, no temporary file (a SIGKILLed one: after the next command)."""
    origin, folder = template
    box = origin.copy(tmp_path / "box")
    before, objects = box.refs(), packs(box.store)
    fault = "pack:chunk-written" + ("" if how == "kill" else f":{how}")
    proc = box.run("conversation", "import", str(folder), env={"JP_FAULT": fault})
    expected = {"int": 130, "term": 130, "kill": -signal.SIGKILL}[how]
    assert proc.returncode == expected, proc.stderr
    assert box.refs() == before, "an interrupted import moved a ref"
    assert packs(box.store) == objects and loose_objects(box.store) == []
    if how == "kill":
        assert leftovers(box.store), "a SIGKILLed writer cannot clean up (test setup)"
        box.ok("conversation", "ls")
    assert leftovers(box.store) == [], "the temporary pack was left behind"
    cid = ID.findall(box.ok("conversation", "import", str(folder)))[0]
    assert cid == f"jp-c{FOLDER_ID}"
    box.fsck()


def test_jp_q_after_an_import_appends_loose(template: tuple[Sandbox, Path], tmp_path: Path) -> None:
    origin, folder = template
    box = origin.copy(tmp_path / "box")
    cid = ID.findall(box.ok("conversation", "import", "--activate", str(folder)))[0]
    box.ok("q", "one more")
    assert box.conversations()[cid].kinds[-3:] == ["turn_start", "chat_request", "chat_response"]
    assert json.loads(box.ok("--format", "json", "conversation", "show", cid))["id"] == cid
    assert os.path.isdir(box.store / "objects" / "pack")
    assert store_module.PACK_AT > 3


def test_a_repack_begun_before_the_ref_cannot_drop_the_packs_after_it(tmp_path: Path) -> None:
    """git's repack (`git gc --prune=now`) decides at its start which packs it will
    delete: every pack no ref reaches then and no ``.keep`` protects.  One begun
    after the import published its packs and before its ref was written deletes
    them later, when every check of the import has passed; a kept pack it leaves
    alone.  The repack's two moments are played here: its choice at the point
    between the packs and the ref, its deletions once the import has returned."""
    init_bare(tmp_path / "s.git")
    store = Store(tmp_path / "s.git")
    chosen: list[Path] = []

    def repack_begins(name: str) -> None:
        if name == "create:objects-written":
            pack = store.gitdir / "objects" / "pack"
            chosen.extend(
                p for p in pack.glob("pack-*.pack") if not p.with_suffix(".keep").exists()
            )

    faults.install(repack_begins)
    try:
        tip = store.log.create("jp-c1", events(EVENTS), None, "import")
    finally:
        faults.install(None)
    for pack in chosen:  # the repack's deletions, after the import said it was done
        pack.unlink()
        pack.with_suffix(".idx").unlink()
    assert not list((store.gitdir / "objects" / "pack").glob("*.keep")), "a shelter stayed"
    fresh = pygit2.Repository(str(store.gitdir))
    assert len(list(fresh.walk(tip))) == EVENTS, "the import lost commits to the repack"
