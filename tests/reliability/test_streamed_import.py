"""An import streamed from events.json into packs: memory that does not grow with the
file, a file changed under the import refused with nothing written, a kill before
the ref leaves no conversation, and git's prune beside it loses nothing."""

from __future__ import annotations

import json
import subprocess
import threading
import tracemalloc
from pathlib import Path

import pytest

from gitstore import Store, faults, jsonstream
from gitstore.git import refs
from gitstore.store import packwrite
from gitstore.store.repo import init_bare
from porcelain.app.reimport import already_there
from porcelain.app.transfer import store_imported
from porcelain.errors import UserError
from porcelain.jpformat import EventFile, read_conversation, scan_conversation
from tests.reliability.harness import ID, Sandbox
from tests.reliability.test_bulk_write import FOLDER_ID, jp_folder, leftovers, packs


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return jp_folder(tmp_path_factory.mktemp("streamed"), 3000)


def empty_store(root: Path) -> Store:
    init_bare(root / "s.git")
    return Store(root / "s.git")


def test_a_scanned_folder_holds_no_events_and_reads_as_the_whole_one(folder: Path) -> None:
    scanned = scan_conversation(folder)
    assert isinstance(scanned.events, EventFile) and len(scanned.events) == 3000
    whole = read_conversation(folder)
    assert list(scanned.events) == whole.events
    assert list(scanned.events) == whole.events, "a second pass differs from the first"
    assert scanned.first == whole.events[0] and scanned.metadata == whole.metadata


def test_a_legacy_first_delta_is_the_base_config_and_is_skipped(tmp_path: Path) -> None:
    events = [
        {"type": "config_delta", "timestamp": "2026-01-05 09:00:00.0", "model": "x"},
        {"type": "chat_request", "timestamp": "2026-01-05 09:00:01.0", "content": "hi"},
    ]
    (tmp_path / "events.json").write_text(json.dumps(events))
    scanned, whole = scan_conversation(tmp_path), read_conversation(tmp_path)
    assert scanned.base_config == whole.base_config == {"model": "x"}
    assert len(scanned.events) == 1 and list(scanned.events) == whole.events
    assert scanned.first == whole.events[0]


@pytest.mark.parametrize("change", ["edited", "grown", "broken", "hostile"])
def test_a_file_changed_after_its_scan_is_refused_and_nothing_is_written(
    folder: Path, tmp_path: Path, change: str
) -> None:
    copy = tmp_path / folder.name
    copy.mkdir()
    for name in ("events.json", "metadata.json"):
        (copy / name).write_bytes((folder / name).read_bytes())
    scanned = scan_conversation(copy)
    store = empty_store(tmp_path)
    before = packs(store.gitdir)
    path = copy / "events.json"
    entries = json.loads(path.read_text())
    if change == "edited":
        entries[-1]["message"] = "not what was checked"
    elif change == "hostile":  # a pass takes its entries as checked: never this one
        entries[-1] = {"type": "chat_request", "timestamp": "not a time", "content": 5}
    elif change == "grown":
        entries.append(entries[-1])
    path.write_text(json.dumps(entries) if change != "broken" else json.dumps(entries)[:-1])
    with pytest.raises(UserError) as caught:
        store_imported(store, scanned)
    assert "changed while it was imported" in caught.value.message
    assert store.refs.list() == [] and store.refs.target(refs.live(f"jp-c{FOLDER_ID}")) is None
    assert packs(store.gitdir) == before and leftovers(store.gitdir) == []


def _peak(root: Path, count: int) -> int:
    """The traced peak of scanning and importing ``count`` events (bytes)."""
    source = jp_folder(root / "src", count)
    store = empty_store(root)
    tracemalloc.start()
    try:
        scanned = scan_conversation(source)
        assert already_there(store, scanned.jp_id, scanned.events) is None
        store_imported(store, scanned)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_number_of_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four times the events, about the same peak: nothing holds the event list (before,
    the peak grew with it: 4x the events, ~3.5x the memory)."""
    monkeypatch.setattr(packwrite, "CHUNK", 1000)  # several packs each, as a big import has
    monkeypatch.setattr(jsonstream, "CHUNK", 1 << 16)  # reads smaller than either file
    small = _peak(tmp_path / "small", 2000)
    large = _peak(tmp_path / "large", 8000)
    assert large < small * 1.5, (
        f"peak {small / 1e6:.1f} MB for 2,000, {large / 1e6:.1f} MB for 8,000"
    )


def _repacked_or_pruned(store: Store, how: str) -> None:
    """At ``create:objects-written``: what git's gc may do to packs no ref reaches yet."""

    def hook(name: str) -> None:
        if name != "create:objects-written":
            return
        pack = store.gitdir / "objects" / "pack"
        if how == "pruned":  # git gc --prune=now: unreachable packed objects dropped
            for path in pack.glob("pack-*"):
                path.unlink()
        else:  # repacked: the same objects, in a pack of another name
            subprocess.run(
                ["git", "--git-dir", str(store.gitdir), "repack", "-a", "-d", "-k", "-q"],
                check=True,
            )

    faults.install(hook)


@pytest.mark.parametrize("how", ["pruned", "repacked"])
def test_packs_pruned_or_repacked_before_the_ref_lose_nothing(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    store = empty_store(tmp_path)
    writes: list[int] = []
    original = packwrite.write_stream

    def counted(*args: object, **kwargs: object) -> packwrite.Packed:
        writes.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(packwrite, "write_stream", counted)
    _repacked_or_pruned(store, how)
    try:
        cid = store_imported(store, scan_conversation(folder))
    finally:
        faults.install(None)
    assert len(writes) == (2 if how == "pruned" else 1), "written again only when lost"
    fresh = Store(store.path)
    assert len(fresh.log.load(cid).events) == 3001
    proc = subprocess.run(
        ["git", "--git-dir", str(store.gitdir), "fsck", "--strict", "--no-dangling"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


# -- through jp --------------------------------------------------------------------------


def test_killed_after_its_packs_before_its_ref_an_import_leaves_no_conversation(
    folder: Path, tmp_path: Path
) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    before = box.refs()
    box.kill("create:objects-written", "conversation", "import", str(folder))
    assert box.refs() == before, "a killed import left a conversation"
    assert box.json("conversation", "ls") == []
    box.git("gc", "--prune=now", "--quiet")  # the orphaned packs go; nothing else
    cid = ID.findall(box.ok("conversation", "import", str(folder)))[0]
    assert len(box.events(box.refs()[refs.live(cid)])) == 3001
    box.fsck()


def test_imports_beside_git_gc_prune_now_land_whole_or_name_the_prune(
    folder: Path, tmp_path: Path
) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    stop = threading.Event()
    rounds = [0]

    def gc() -> None:
        while not stop.is_set():
            box.git("gc", "--prune=now", "--quiet", check=False)
            rounds[0] += 1

    copies = []
    for n in range(3):  # three conversations (the same folder again would be "unchanged")
        copy = tmp_path / f"1780000060{n}-beside-gc"
        copy.mkdir()
        for name in ("events.json", "metadata.json"):
            (copy / name).write_bytes((folder / name).read_bytes())
        copies.append(copy)
    worker = threading.Thread(target=gc, daemon=True)
    worker.start()
    landed: list[str] = []
    try:
        for copy in copies:
            proc = box.run("conversation", "import", str(copy))
            if proc.returncode == 0:
                landed += ID.findall(proc.stdout)
            else:
                assert "internal error" not in proc.stderr and "prune" in proc.stderr, proc.stderr
    finally:
        stop.set()
        worker.join(timeout=120)
    assert rounds[0] > 0 and landed, "no import landed beside the prune"
    tips = box.refs()
    for cid in landed:
        assert len(box.events(tips[refs.live(cid)])) == 3001, f"{cid} lost events"
    box.fsck()


def test_a_pass_reports_each_thousand_events_and_the_end(folder: Path) -> None:
    scanned = scan_conversation(folder)
    assert isinstance(scanned.events, EventFile)
    seen: list[tuple[int, int]] = []
    scanned.events.on_event = lambda done, total: seen.append((done, total))
    store = empty_store(folder.parent / "progress")
    store_imported(store, scanned)
    assert seen == [(1000, 3000), (2000, 3000), (3000, 3000), (3000, 3000)]


def test_a_long_folder_imported_again_is_found_event_by_event(folder: Path, tmp_path: Path) -> None:
    store = empty_store(tmp_path)
    cid = store_imported(store, scan_conversation(folder))
    assert already_there(store, cid, scan_conversation(folder).events) == cid
    copy = tmp_path / folder.name
    copy.mkdir()
    (copy / "metadata.json").write_bytes((folder / "metadata.json").read_bytes())
    entries = json.loads((folder / "events.json").read_text())
    entries[-1]["message"] = "a different last answer"
    (copy / "events.json").write_text(json.dumps(entries))
    assert already_there(store, cid, scan_conversation(copy).events) is None


def test_a_short_folder_goes_into_one_pack_and_nothing_is_loose(tmp_path: Path) -> None:
    """A JP folder below the streaming size is packed too (three loose files an event cost
    an import of the sixteen real conversations four fifths of its time)."""
    small = jp_folder(tmp_path / "f", 20)
    store = empty_store(tmp_path)
    gitdir = tmp_path / "s.git"
    cid = store_imported(store, scan_conversation(small))

    def git(*args: str, input: str | None = None) -> str:
        return subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True,
                              text=True, check=True, input=input).stdout

    loose = sorted(p.parent.name + p.name for p in (gitdir / "objects").glob("??/*"))
    anchor = git("hash-object", "--stdin", input=f"jp-conversation {cid}\n").strip()
    chain = {line.split()[0] for line in git("rev-list", "--objects", refs.live(cid)).splitlines()}
    assert anchor in loose  # the anchor is loose; the notes and op-log objects are too
    assert not chain & set(loose)  # nothing of the chain: it is in its pack
    git("fsck", "--strict", "--no-dangling")
    assert list(Store(gitdir).log.load(cid).events)[1:] == read_conversation(small).events
    assert leftovers(gitdir) == []
