"""A store of many conversations written by `git fast-import`, for the sync rows.

The same store as ``bench.build.many_conversations`` (conversation 0 holds one
turn, every other one is a fork of it, each titled by one metadata note, refs
packed), but its commits are the bytes jp writes (``events.commits``)
fed to one `git fast-import`: one pack instead of half a million loose objects,
so 100,000 conversations are written in about a minute, not twelve.  The event
cache is not filled (it is derived: the first read fills it).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from typing import BinaryIO

from bench import build
from bench.synth import EVENTS_PER_TURN, Writer
from gitstore import ids
from gitstore.events import Event, commits, parse_time, validate
from gitstore.git import refs
from gitstore.store import notes
from gitstore.store.core import Store
from gitstore.store.types import Identity


def _line(who: str, event: Event) -> bytes:
    moment = int(parse_time(str(event["timestamp"])).timestamp())
    email = Identity().email.encode()
    return b"%s <%s> %d +0000" % (who.encode(), email, moment)


def _commit(feed: BinaryIO, ref: str, event: Event, parent: str | None) -> None:
    """One event commit on ``ref`` (its tree only ``event.json``), as jp writes it."""
    checked = validate(event)
    author, committer = _line(commits.author_name(checked), checked), _line("jp", checked)
    blob, message = commits.blob_bytes(checked), commits.message(checked).encode()
    feed.write(b"commit %s\nauthor %s\ncommitter %s\n" % (ref.encode(), author, committer))
    feed.write(b"data %d\n%s\n" % (len(message), message))
    if parent is not None:
        feed.write(b"from %s\n" % parent.encode())
    feed.write(b"deleteall\nM 100644 inline event.json\ndata %d\n%s\n\n" % (len(blob), blob))


def _forks(writer: Writer, cids: list[str], base: str) -> Iterator[Event]:
    for cid in cids[1:]:
        yield {
            "type": "conversation_start",
            "timestamp": writer.stamp(),
            "conversation_id": cid,
            "forked_from": {"conversation_id": cids[0], "commit": base},
        }


def _titles(feed: BinaryIO, store: Store, cids: list[str]) -> None:
    """The anchors, then one notes commit holding a title for each conversation."""
    for cid in cids:
        anchor = ids.anchor_bytes(cid)
        feed.write(b"blob\ndata %d\n%s\n" % (len(anchor), anchor))
    stamp = int(time.time() * 1000)
    who = b"jp <jp@localhost> %d +0000" % (stamp // 1000)
    message = b"bench: titles\n"
    feed.write(b"commit %s\ncommitter %s\n" % (refs.NOTES_META.encode(), who))
    feed.write(b"data %d\n%s\n" % (len(message), message))
    for n, cid in enumerate(cids):
        line = notes.meta_line("title", f"Synthetic conversation {n}", stamp, store.notes.machine)
        data = (line + "\n").encode()
        name = store.notes.anchor(cid).encode()
        feed.write(b"M 100644 inline %s\ndata %d\n%s\n" % (name, len(data), data))
    feed.write(b"\n")


def many_conversations(store: Store, count: int, log: Callable[[str], None]) -> list[str]:
    """``count`` conversations forked from one shared turn, each titled, refs packed
    (``bench.build.many_conversations``, through `git fast-import`)."""
    writer = Writer(7)
    cids = [build.cid_for(n) for n in range(count)]
    first = list(writer.events(cids[0], 1 + EVENTS_PER_TURN))
    base = build.write_events(store, first, None)  # a few commits: jp's own write
    assert base is not None
    feed_path = store.gitdir / "bench-feed.fi"
    with feed_path.open("wb") as feed:
        feed.write(b"reset %s\nfrom %s\n\n" % (refs.live(cids[0]).encode(), base.encode()))
        for cid, event in zip(cids[1:], _forks(writer, cids, base), strict=True):
            _commit(feed, refs.live(cid), event, base)
        _titles(feed, store, cids)
        feed.write(b"done\n")
    with feed_path.open("rb") as source:
        git = ["git", "--git-dir", str(store.gitdir), "fast-import", "--quiet", "--done"]
        subprocess.run(git, stdin=source, check=True)
    feed_path.unlink()
    log(f"    {count:,} conversations written by git fast-import")
    build.pack_refs(store)
    store.refs.set_active(cids[-1])
    return cids

