"""Building big stores quickly: commits in large batches, refs in bulk.

Chains are written with ``store.log.write_commits`` (which also fills the cache,
as jp's own writes do), never through the CLI.  Each conversation also gets
the reflog a real one would have: about five ref moves per eight-event turn.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pygit2

from bench.synth import EVENTS_PER_TURN, Writer
from gitstore import ids
from gitstore.events import Event
from gitstore.git import refs
from gitstore.store import notes
from gitstore.store.core import Store
from gitstore.store.repo import init_bare

BATCH = 10_000
FIRST_ID = 17_000_000_000  # deciseconds: 2023-11-14


def cid_for(n: int) -> str:
    return ids.from_deciseconds(FIRST_ID + n * 10)


def new_store(path: Path) -> Store:
    """An empty store whose automatic maintenance is off (runs must not overlap a gc)."""
    repo, _ = init_bare(path)
    repo.config["gc.auto"] = "0"
    repo.config["gc.autoDetach"] = "false"
    return Store(path)


def write_events(
    store: Store, events: Iterable[Event], parent: str | None, batch: int = BATCH
) -> str | None:
    """Commit ``events`` on top of ``parent`` in batches; returns the new tip."""
    names: dict[str, str] = {}
    pending: list[Event] = []

    def flush() -> None:
        nonlocal parent
        if pending:
            parent = store.log.write_commits(pending, parent, names)[-1]
            for event in pending:
                if event.get("type") == "tool_call_request":
                    names[str(event["id"])] = str(event["name"])
            pending.clear()

    for event in events:
        pending.append(event)
        if len(pending) >= batch:
            flush()
    flush()
    return parent


def fake_reflog(store: Store, cid: str, tip: str, events: int) -> None:
    """The reflog that ``events`` appended one turn step at a time would leave."""
    moves = max(1, events * 5 // EVENTS_PER_TURN)
    now = int(time.time())
    line = f"{'0' * 40} {tip} jp <jp@localhost> {now} +0000\tjp query {cid}\n"
    log = store.gitdir / "logs" / refs.live(cid)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(line * moves)


def conversation(store: Store, cid: str, count: int, seed: int) -> str:
    """A live conversation of ``count`` synthetic events; returns its tip."""
    tip = write_events(store, Writer(seed).events(cid, count), None)
    assert tip is not None
    store.log.create(cid, [], tip, f"bench: {count} events")
    fake_reflog(store, cid, tip, count)
    return tip


def many_conversations(store: Store, count: int, log: Callable[[str], None]) -> list[str]:
    """``count`` conversations forked from one shared turn, each titled, refs packed.

    Conversation 0 holds the shared turn; every other one is a fork of it
    (its own creation commit on the shared tip), so every tip differs.
    """
    writer = Writer(7)
    cids = [cid_for(n) for n in range(count)]
    base = write_events(store, writer.events(cids[0], 1 + EVENTS_PER_TURN), None)
    assert base is not None
    tips = [base]
    for cid in cids[1:]:
        start: Event = {
            "type": "conversation_start",
            "timestamp": writer.stamp(),
            "conversation_id": cid,
            "forked_from": {"conversation_id": cids[0], "commit": base},
        }
        tips.append(store.log.write_commits([start], base)[0])
    log(f"    {count} tips written")
    repo = store.repo
    for cid, tip in zip(cids, tips, strict=True):
        repo.create_blob(ids.anchor_bytes(cid))
        repo.create_reference_direct(refs.live(cid), tip, False, message="bench: create")
    pack_refs(store)
    log("    refs created and packed")
    _titles(store, cids)
    store.refs.set_active(cids[-1])
    return cids


def _titles(store: Store, cids: list[str]) -> None:
    """One metadata note per conversation (a title), written as one notes commit."""
    repo = store.repo
    stamp = int(time.time() * 1000)
    builder = repo.TreeBuilder()
    for n, cid in enumerate(cids):
        line = notes.meta_line("title", f"Synthetic conversation {n}", stamp, store.notes.machine)
        builder.insert(store.notes.anchor(cid), repo.create_blob(line + "\n"), pygit2.GIT_FILEMODE_BLOB)
    signature = pygit2.Signature("jp", "jp@localhost")
    repo.create_commit(refs.NOTES_META, signature, signature, "bench: titles", builder.write(), [])


def pack_refs(store: Store) -> None:
    git = shutil.which("git")
    if git:
        subprocess.run([git, "--git-dir", str(store.gitdir), "pack-refs", "--all"], check=True)
    else:
        store.repo.compress_references()
