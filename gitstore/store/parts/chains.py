"""The reading half of a store's log: chains and events, from the cache first, else git."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from gitstore import ids
from gitstore.cache.facts import ChainFacts, Facts, segment_facts
from gitstore.cache.view import ChainView, Segment
from gitstore.errors import CorruptEvent
from gitstore.events import Event
from gitstore.events.kinds import Kind
from gitstore.store.types import Conversation, Located

if TYPE_CHECKING:
    import pygit2

    from gitstore.store.ground import Ground
    from gitstore.store.parts.refs import Refs
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")  # loaded by the first command that touches git objects


class Chains:
    """The reading half of ``Log``: chains and events, from the cache first, else git."""

    def __init__(self, ground: Ground, refs: Refs) -> None:
        self._g = ground
        self._refs = refs

    def load(self, cid: str) -> Conversation:
        where = self._refs.require(cid)
        try:
            events, chain = self.read_chain(where.tip)
        except CorruptEvent as exc:
            raise CorruptEvent(exc.commit, exc.reason, cid) from None
        return Conversation(cid, where.tip, where.archived, events, chain)

    def read_chain(self, tip: str) -> tuple[list[Event], list[str]]:
        """Events from the root to ``tip`` and their commit ids."""
        found = self._g.cache.events(tip)
        if found is None:
            rows, complete = self._g.cache.chain(tip)
            start = rows[-1][1] if rows else tip
            if not complete and start is not None:
                self._fill_cache(start)
            found = self._g.cache.events(tip)
        if found is None:  # cache unusable: read git directly
            return self.read_run(tip)
        return found

    def iter_chain(self, tip: str) -> Iterator[Event]:
        """The events from the root to ``tip``, read one at a time as they are asked for:
        of the chain only its commit ids are held (20 bytes each), never its events."""
        ids = bytearray()
        commit = self._g.commit(tip)
        while True:
            ids += commit.id.raw
            if not commit.parent_ids:
                break
            commit = self._g.commit(commit.parent_ids[0])
        for end in range(len(ids), 0, -20):
            commit = self._g.commit(pygit2.Oid(raw=bytes(ids[end - 20 : end])))
            yield self._g.event(commit)

    def view(self, cid: str) -> tuple[Located, ChainView]:
        """A conversation whose events are read only where they are asked for.

        Its facts (length, turns, internal events) come from the cache's
        segments without reading the events below the last one; an event is
        read with its segment.  Without a usable cache it is the whole chain.
        """
        where = self._refs.require(cid)
        try:
            return where, self.view_chain(where.tip)
        except CorruptEvent as exc:
            raise CorruptEvent(exc.commit, exc.reason, cid) from None

    def view_chain(self, tip: str) -> ChainView:
        found = self._g.cache.parts(tip)
        if found is None:
            events, commits = self.read_chain(tip)  # fills the cache; reads git if it cannot
            found = self._g.cache.parts(tip)
            if found is None:  # no usable cache: the chain as read
                return ChainView.of_list(events, commits)
        segments, tail_facts = found.segments, found.tail_facts
        source = _Segments(self)

        def read_facts(k: int) -> Facts:
            if k == len(segments):
                return tail_facts
            got = self._g.cache.segment_facts(segments[k])
            return got if got is not None else segment_facts(source.whole(segments[k])[0])

        return ChainView(
            ChainFacts(found.runs, read_facts),
            segments,
            (found.tail_events, found.tail_ids),
            source,
        )

    def read_run(self, last: str, count: int | None = None) -> tuple[list[Event], list[str]]:
        """The ``count`` events (all: None) ending at commit ``last`` and their ids, from git."""
        events: list[Event] = []
        chain: list[str] = []
        commit = self._g.commit(last)
        while count is None or len(events) < count:
            events.append(self._g.event(commit))
            chain.append(str(commit.id))
            if not commit.parent_ids:
                break
            commit = self._g.commit(commit.parent_ids[0])
        events.reverse()
        chain.reverse()
        return events, chain

    def ids_down(self, last: str, count: int) -> list[str]:
        """The ids of the ``count`` commits ending at ``last`` (fewer at the root),
        root-most first: commits alone, no event read or parsed."""
        out: list[str] = []
        commit = self._g.commit(last)
        while True:
            out.append(str(commit.id))
            if len(out) >= count or not commit.parent_ids:
                break
            commit = self._g.commit(commit.parent_ids[0])
        out.reverse()
        return out

    def event_blobs_down(self, last: str, stop: Container[str]) -> list[tuple[str, str]]:
        """(commit id, the id of its ``event.json``) of each commit from ``last`` down
        to, not including, the first commit in ``stop`` (or to the root), root-most
        first: what a remote holding ``stop`` lacks of the chain.  Each commit and
        tree is read once; no event is (``blob_event`` reads one)."""
        out: list[tuple[str, str]] = []
        oid = last
        while oid not in stop:
            commit = self._g.commit(oid)
            out.append((oid, str(self._g.event_blob(commit))))
            if not commit.parent_ids:
                break
            oid = str(commit.parent_ids[0])
        out.reverse()
        return out

    def blob_event(self, blob: str, commit: str) -> Event:
        """The event the ``event.json`` blob ``blob`` of ``commit`` holds, checked."""
        return self._g.blob_event(blob, commit)

    def prefetch(self, tips: Sequence[str]) -> None:
        """Cache the chains of many tips at once (one cache transaction, not one per tip).

        Each chain is read from git down to the first commit the cache already
        has or this walk has just read (forks share their history).  A chain the
        cache holds only in part is left to ``read_chain``, which checks it.
        """
        seen = self._g.cache.known(tips)
        entries: list[tuple[str, str | None, str]] = []
        for tip in tips:
            oid: str | None = tip
            while oid is not None and oid not in seen:
                try:
                    commit = self._g.commit(oid)
                    data = self._g.event_bytes(commit)
                except (CorruptEvent, KeyError, ValueError):
                    break  # read_chain reports it for this conversation alone
                parent = str(commit.parent_ids[0]) if commit.parent_ids else None
                entries.append((oid, parent, data.decode()))
                seen.add(oid)
                if parent is not None and parent not in seen and self._g.cache.known([parent]):
                    seen.add(parent)
                oid = parent
            if len(entries) >= 5000:
                self._g.cache.add(entries)
                entries = []
        self._g.cache.add(entries)

    def text_candidates(self, tips: Sequence[str], needles: Sequence[str]) -> set[str] | None:
        """Which ``tips`` may hold, in one event's text, every needle (any case): a
        superset of those that do, from the cache's index.  None: read them all."""
        found = self._g.cache.search.candidates(tips, needles)
        if found is None or not found[1]:
            return None if found is None else found[0]
        self.prefetch(found[1])  # chains the cache lacks: new, or moved by plain git
        found = self._g.cache.search.candidates(tips, needles)
        return None if found is None else found[0] | set(found[1])

    def listed_candidates(
        self, refs: str, needles: Sequence[str], archived: Sequence[bool], hide: int
    ) -> list[Located] | None:
        """``text_candidates`` answered from the listing's kept rows (brought up to date
        by the caller for the refs' fingerprint ``refs``), so that no ref is listed: the
        conversations, of those ``archived`` as asked and (archived ones) with no bit of
        ``hide``, that may hold every needle.  Each is checked against its ref, so a
        kept row that lies names nothing git does not hold: None then (and whenever the
        index cannot answer), so that the caller lists the refs."""
        search = self._g.cache.search
        found = search.in_listing(refs, needles, archived, hide)
        if found is not None and found[1]:
            self.prefetch(found[1])  # chains the cache lacks: new, or moved by plain git
            found = search.in_listing(refs, needles, archived, hide)
        if found is None:
            return None
        out = [Located(cid, tip, kept) for cid, tip, kept in found[0]]
        for loc in out:
            if not ids.is_valid(loc.cid) or self._refs.locate(loc.cid) != loc:
                self._g.cache.listing.forget()  # a row that lies: every row is made again
                return None
        return sorted(out, key=lambda loc: (not loc.archived, loc.cid))  # as refs.list orders

    def current_turn(self, tip: str) -> list[Event]:
        """The events since the last ``turn_start`` at ``tip`` (a short walk back)."""
        out: list[Event] = []
        commit = self._g.commit(tip)
        while True:
            event = self._g.event(commit)
            out.append(event)
            if event.get("type") == Kind.TURN_START or not commit.parent_ids:
                break
            commit = self._g.commit(commit.parent_ids[0])
        out.reverse()
        return out

    def _fill_cache(self, start: str) -> None:
        """Read git from ``start`` down to the first commit whose chain the cache holds
        whole (or the root) and keep every event read.  The commits are walked in batches
        that grow (1, 4, 16 ... 1,024), each asked of the cache in one query: one query a
        commit cost a cold load of 10,000 events a fifth of its time, and a new event on
        a cached chain still stops at its parent."""
        entries: list[tuple[str, str | None, str]] = []
        oid: str | None = start
        size = 1
        while oid is not None:
            batch: list[tuple[str, pygit2.Commit]] = []
            while oid is not None and len(batch) < size:
                commit = self._g.commit(oid)
                batch.append((oid, commit))
                oid = str(commit.parent_ids[0]) if commit.parent_ids else None
            stop = self._cached_from([c for c, _ in batch], skip=not entries)
            for c, commit in batch[:stop]:
                parent = str(commit.parent_ids[0]) if commit.parent_ids else None
                entries.append((c, parent, self._g.event_bytes(commit).decode()))
            if stop < len(batch):
                break
            if len(entries) >= 2000:
                self._g.cache.add(entries)
                entries = []
            size = min(size * 4, 1024)
        self._g.cache.add(entries)

    def _cached_from(self, commits: list[str], skip: bool) -> int:
        """The index of the first of ``commits`` (the first one left out when ``skip``)
        whose chain the cache holds down to the root; ``len(commits)`` if none."""
        first = 1 if skip else 0
        asked = commits[first:]
        known = self._g.cache.known(asked) if asked else set()
        if asked:  # the first one asked directly too: an SQLite without json_each knows none
            known.add(asked[0])
        for at in range(first, len(commits)):
            if commits[at] in known and self._g.cache.chain(commits[at])[1]:
                return at
        return len(commits)

    def known(self, commits: Sequence[str]) -> set[str]:
        """Which of ``commits`` this store has read or written before (the cache's rows:
        events checked already)."""
        return self._g.cache.known(commits)

    def remember(self, rows: Iterable[tuple[str, str | None, Event | str]]) -> None:
        """Keep checked events (commit, parent, event) as read, so they are not read again."""
        self._g.cache.add(rows)


class _Segments:
    """A view's segments as the store reads them: from the cache, else from git."""

    def __init__(self, chains: Chains) -> None:
        self._cache = chains._g.cache
        self._read_run = chains.read_run

    def whole(self, segment: Segment) -> tuple[list[Event], list[str]]:
        got = self._cache.segment(segment)
        return got if got is not None else self._read_run(segment.last, segment.count)

    def ids(self, segment: Segment) -> list[str]:
        got = self._cache.segment_ids(segment)
        return got if got is not None else self.whole(segment)[1]

    def events(self, commits: Sequence[str]) -> list[Event] | None:
        return self._cache.rows(commits)

    def measured(self, segment: Segment, name: str) -> Any:
        key = _measure_key(segment, name)
        return self._cache.values([key], _measure_version(segment)).get(key)

    def keep_measure(self, segment: Segment, name: str, value: Any) -> None:
        self._cache.keep_values(_measure_version(segment), {_measure_key(segment, name): value})


def _measure_key(segment: Segment, name: str) -> str:
    return f"segment {name} {segment.last}"


def _measure_version(segment: Segment) -> str:
    return f"{segment.start}+{segment.count}"
