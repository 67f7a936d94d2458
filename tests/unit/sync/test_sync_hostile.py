"""Pulls from a hostile remote (built with plain git): whatever it holds is refused
by name or kept aside, never breaks another conversation, never moves a local tip,
and leaves `git fsck --strict` clean."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from gitstore.boundary import Limits
from gitstore.git import refs
from gitstore.git.refs import quarantine
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import journal, remotes
from gitstore.sync.here import Here
from gitstore.sync.inbound import Known, check_chain
from gitstore.sync.pull import Syncer
from gitstore.sync.push import push
from gitstore.sync.transport import choose
from tests.support.servers.fixtures import Remote, every_remote
from tests.unit.sync.hostile import Hostile, intact, refused, request, snapshot

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="plain git builds the hostile remote")
CID = "jp-c17000000100"
Make = Callable[..., tuple[Store, Syncer]]


def start(cid: str) -> dict[str, object]:
    return {
        "type": "conversation_start",
        "timestamp": "2026-01-05T09:00:00Z",
        "conversation_id": cid,
    }


@pytest.fixture
def machine(tmp_path: Path, bare_remote: Remote) -> Make:
    """Stores that sync with ``bare_remote`` (a path; with ``@every_remote`` also over
    SSH and HTTP, where the git command line is the transport)."""

    def make(name: str, limits: Limits | None = None) -> tuple[Store, Syncer]:
        init_bare(tmp_path / name)
        store = Store(tmp_path / name, limits=limits)
        remotes.add(store.repo, "origin", bare_remote.url)
        transport = choose(store.repo, GIT)
        return store, Syncer(Here.of(store), "origin", transport)

    return make


@pytest.fixture
def shared(machine: Make, tmp_path: Path) -> tuple[Store, Syncer, Hostile]:
    """A store with one conversation (titled), pushed to the remote the attacker can write."""
    store, syncer = machine("mine")
    store.log.create(CID, [start(CID), request("mine")], None, "test")
    store.notes.set_meta(CID, {"title": "mine"}, "test")
    push(syncer)
    return store, syncer, Hostile(tmp_path / "remote.git")


@every_remote
def test_refs_at_a_blob_or_a_tree_are_refused(shared: tuple[Store, Syncer, Hostile]) -> None:
    store, syncer, bad = shared
    bad.ref("refs/conversations/jp-c1", bad.blob("not a commit\n"))
    bad.ref("refs/archive/conversations/jp-c2", bad.tree([]))
    before = snapshot(store)
    out = refused(syncer.pull())
    assert out["refs/conversations/jp-c1"].detail == "points at a blob, not a commit"
    assert out["refs/archive/conversations/jp-c2"].detail == "points at a tree, not a commit"
    assert not any(o.kept for o in out.values()), "non-commits are not kept aside"
    assert [loc.cid for loc in store.refs.list(None)] == [CID]
    intact(store, before)
    assert push(syncer) and store.refs.quarantined() == []


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"type": "turn_start", "timestamp": \n', "invalid JSON"),
        ('{"type": "turn_start", "timestamp": "2026-01-05T09:00:00Z"}'.encode("utf-16"), "not UTF-8"),
        (b'{"type": "chat_request", "timestamp": "2026-01-05T09:00:00Z", "content": 5}', "content"),
        (b'{"type": "compaction", "timestamp": "2026-01-05T09:00:00Z", "from_turn": "x", "to_turn": 1}', "from_turn"),
        (b'{"type": "chat_request", "timestamp": "2026-01-05T09:00:00Z", "content": "\\udcff"}', "surrogate"),
    ],
    ids=["not-json", "utf-16", "wrong-type", "wrong-turn-type", "lone-surrogate"],
)  # fmt: skip
@every_remote
def test_chains_that_are_not_events_are_quarantined(
    shared: tuple[Store, Syncer, Hostile], data: bytes, reason: str
) -> None:
    store, syncer, bad = shared
    base = bad.tip(refs.live(CID))
    bad.ref("refs/conversations/jp-c3", bad.event(data, base))  # on top of a good chain
    bad.ref(refs.live(CID), bad.event(request("good news"), base))  # and a good change
    before = snapshot(store)
    out = syncer.pull()
    why = refused(out)["refs/conversations/jp-c3"]
    assert reason in why.detail and why.kept == "refs/jp/quarantine/origin/conversations/jp-c3"
    assert {o.id: o.action for o in out if o.kind == "conversation"} == {CID: "fast-forwarded"}
    held = store.refs.quarantined()
    assert [(q.remote, q.remote_ref) for q in held] == [("origin", "refs/conversations/jp-c3")]
    assert reason in held[0].reason
    del before[refs.live(CID)]  # it moved forward, as it should
    intact(store, before)
    assert [e.get("content") for e in store.log.load(CID).events][-1] == "good news"
    # the remote fixes it: the next pull lets it go from quarantine
    bad.delete("refs/conversations/jp-c3")
    assert refused(syncer.pull()) == {} and store.refs.quarantined() == []


def test_removing_the_remote_drops_what_it_kept_aside(
    shared: tuple[Store, Syncer, Hostile],
) -> None:
    store, syncer, bad = shared
    bad.ref("refs/conversations/jp-c3", bad.event(b"not json", bad.tip(refs.live(CID))))
    syncer.pull()
    assert [q.remote_ref for q in store.refs.quarantined()] == ["refs/conversations/jp-c3"]
    from gitstore.store.doctor import check_quarantine

    (finding,) = check_quarantine(store)
    assert "origin's refs/conversations/jp-c3" in finding.problem
    assert "JSON" in finding.problem  # the reason the pull gave
    before = snapshot(store)
    remotes.remove(store.repo, "origin")
    assert store.refs.quarantined() == []
    assert not (store.gitdir / "jp" / "quarantine" / "origin.json").exists()
    intact(store, before)


def test_merges_and_extra_files_are_not_event_chains(shared: tuple[Store, Syncer, Hostile]) -> None:
    store, syncer, bad = shared
    base = bad.tip(refs.live(CID))
    other = bad.event(request("other"))
    bad.ref("refs/conversations/jp-c4", bad.event(request("merged"), base, other))
    blob = bad.blob("{}")
    event = bad.blob('{"type": "turn_start", "timestamp": "2026-01-05T09:00:00Z"}')
    tree = bad.tree([f"100644 blob {event}\tevent.json", f"100755 blob {blob}\trun.sh"])
    bad.ref("refs/conversations/jp-c5", bad.commit(tree, base))
    before = snapshot(store)
    out = refused(syncer.pull())
    assert "2 parents" in out["refs/conversations/jp-c4"].detail
    assert (
        "event.json and nothing else (it holds: event.json, run.sh)"
        in out["refs/conversations/jp-c5"].detail
    )
    intact(store, before)


def test_an_oversized_event_is_refused_and_not_kept(machine: Make, tmp_path: Path) -> None:
    store, syncer = machine("mine", Limits(max_event_bytes=20_000))
    store.log.create(CID, [start(CID), request("mine")], None, "test")
    push(syncer)
    bad = Hostile(tmp_path / "remote.git")
    big = {"type": "tool_call_response", "timestamp": "2026-01-05T09:00:00Z", "id": "t",
           "content": "x" * 50_000, "is_error": False}  # fmt: skip
    bad.ref(refs.live(CID), bad.event(big, bad.tip(refs.live(CID))))
    before = snapshot(store)
    out = refused(syncer.pull())
    assert (
        "over the limit of 19.5 KiB per event (store.max_event_bytes)" in out[refs.live(CID)].detail
    )
    assert out[refs.live(CID)].kept is None
    intact(store, before)
    # with the limit raised, the same remote comes in (the refusal is not remembered blindly)
    bigger = Syncer(
        Here.of(store), "origin", syncer.transport, limits=Limits(max_event_bytes=100_000)
    )
    assert refused(bigger.pull()) == {}
    assert store.log.load(CID).events[-1]["content"] == "x" * 50_000


def test_a_journal_pull_checks_again_what_another_limit_refused(
    machine: Make, tmp_path: Path
) -> None:
    """The journal has not moved, yet a pull under a raised limit is not "nothing to
    pull" (``journalstate.nothing_to_pull``: a refused ref waits to be checked again):
    it fetches that ref alone, and the event comes in."""
    store, syncer = machine("mine", Limits(max_event_bytes=20_000))
    store.log.create(CID, [start(CID), request("mine")], None, "test")
    push(syncer)
    bad = Hostile(tmp_path / "remote.git")
    big = {"type": "tool_call_response", "timestamp": "2026-01-05T09:00:00Z", "id": "t",
           "content": "x" * 50_000, "is_error": False}  # fmt: skip
    bad.ref(refs.live(CID), bad.event(big, bad.tip(refs.live(CID))))  # no journal entry
    assert "over the limit" in refused(syncer.pull(full=True))[refs.live(CID)].detail
    gitdir = store.place.gitdir
    assert journal.pulls_since_reconcile(gitdir, "origin") == 0
    bigger = Syncer(
        Here.of(store), "origin", syncer.transport, limits=Limits(max_event_bytes=100_000),
        journal_from=0,
    )  # fmt: skip
    assert refused(bigger.pull()) == {}
    assert journal.pulls_since_reconcile(gitdir, "origin") == 1, "a journal pull, no reconcile"
    assert store.log.load(CID).events[-1]["content"] == "x" * 50_000


@every_remote
def test_a_deep_ref_does_not_blind_the_pull(shared: tuple[Store, Syncer, Hostile]) -> None:
    store, syncer, bad = shared
    tip = bad.tip(refs.live(CID))
    deep = "refs/conversations/" + "/".join(["d"] * 100)
    bad.ref(deep, tip)
    bad.ref(refs.live(CID), bad.event(request("arrives anyway"), tip))
    out = syncer.pull()
    assert refused(out)[deep].detail == "not a conversation id"
    assert {o.id: o.action for o in out if o.kind == "conversation"} == {CID: "fast-forwarded"}
    assert store.log.load(CID).events[-1]["content"] == "arrives anyway"
    assert [r.name for r in syncer.transport.list_refs([quarantine.ROOT])] == []


@every_remote
def test_objects_git_refuses_never_land_and_the_rest_arrives(
    shared: tuple[Store, Syncer, Hostile],
) -> None:
    store, syncer, bad = shared
    if syncer.transport.name != "git":
        pytest.skip("git's object checks run in git's own fetch")
    note = bad.blob('{"k": "title", "m": "x", "t": 5, "v": "dup"}\n')
    anchor = store.notes.anchor(CID)
    sub = bad.tree([f"100644 blob {note}\t{anchor[2:]}"])
    dup = bad.tree([f"100644 blob {note}\t{anchor[:2]}", f"040000 tree {sub}\t{anchor[:2]}"])
    bad.ref("refs/notes/meta", bad.commit(dup, bad.tip("refs/notes/meta")))
    tip = bad.tip(refs.live(CID))
    bad.ref(refs.live(CID), bad.event(request("arrives anyway"), tip))
    before = snapshot(store)
    out = syncer.pull()
    assert "duplicateEntries" in refused(out)["refs/notes/meta"].detail
    assert store.log.load(CID).events[-1]["content"] == "arrives anyway"
    del before[refs.live(CID)]
    intact(store, before)
    assert not list((store.gitdir / "objects" / "pack").glob("tmp_pack_*")), "a refused pack stays"
    # the next pull remembers it: the bad pack is not fetched again, the answer is the same
    assert "duplicateEntries" in refused(syncer.pull())["refs/notes/meta"].detail
    assert store.notes.meta(CID) == {"title": "mine"}
    pushed = {o.id: o.action for o in push(syncer) if o.direction == "push"}
    assert pushed == {"refs/notes/meta": "refused"}, "nothing is sent over a refused copy"


# -- notes ------------------------------------------------------------------------------------------


def test_bad_metadata_lines_are_dropped_with_a_report(
    shared: tuple[Store, Syncer, Hostile],
) -> None:
    store, syncer, bad = shared
    bad.add_note_lines(
        store.notes.anchor(CID),
        b'{"k": ["x"], "m": "attacker", "t": 1, "v": 1}\n'
        b'{"k": "title", "m": "attacker", "t": 1e400, "v": "evil"}\n'
        b'{"k": "title", "m": "attacker", "t": Infinity, "v": "evil"}\n'
        b'{"k": "title", "m": "attacker", "t": 99999999999999, "v": "ab\xffcd"}\n'
        b'{"k": "labels", "m": "attacker", "t": 99999999999999, "v": {"area": "cli"}}\n',
    )
    before = snapshot(store)
    out = syncer.pull()
    warned = [o for o in out if o.kind == "warning" and o.id == "refs/notes/meta"]
    assert warned and f"the note on {CID}: dropped 4 line(s)" in warned[0].detail
    assert store.notes.meta(CID) == {"title": "mine", "labels": {"area": "cli"}}
    intact(store, before)
    push(syncer)  # the cleaned notes go back: the remote loses the bad lines too
    text = bad.git("notes", "--ref=refs/notes/meta", "show", store.notes.anchor(CID))
    assert "attacker" in text and "1e400" not in text and "evil" not in text


def test_a_notes_ref_at_a_blob_does_not_break_push(shared: tuple[Store, Syncer, Hostile]) -> None:
    store, syncer, bad = shared
    bad.ref("refs/notes/meta", bad.blob("junk\n"))
    store.notes.set_meta(CID, {"title": "renamed here"}, "test")
    before = snapshot(store)
    out = push(syncer)
    assert refused(out)["refs/notes/meta"].detail == "points at a blob, not a commit"
    sent = {o.id: (o.action, o.detail) for o in out if o.direction == "push"}
    assert sent["refs/notes/meta"][0] == "refused"
    assert store.notes.meta(CID)["title"] == "renamed here"
    intact(store, before)


def test_a_notes_folder_clash_is_refused_not_a_race(shared: tuple[Store, Syncer, Hostile]) -> None:
    store, syncer, bad = shared
    tip = bad.tip("refs/notes/meta")
    bad.delete("refs/notes/meta")
    bad.ref("refs/notes/meta/x", tip)
    before = snapshot(store)
    out = push(syncer)
    assert "one level" in refused(out)["refs/notes/meta/x"].detail
    store.notes.set_meta(CID, {"title": "still writable"}, "test")  # no "kept changing" here
    out = push(syncer)
    sent = {o.id: (o.action, o.detail) for o in out if o.direction == "push"}
    assert sent["refs/notes/meta"] == (
        "refused",
        "origin has refs/notes/meta/x, which leaves no room for it",
    )
    assert [r.name for r in syncer.transport.list_refs(["refs/notes/"])] == ["refs/notes/meta"]
    intact(store, before)


def test_a_notes_tree_3000_levels_deep(shared: tuple[Store, Syncer, Hostile]) -> None:
    store, syncer, bad = shared
    anchor = store.notes.anchor(CID)
    note = bad.blob('{"k": "title", "m": "deep", "t": 99999999999999, "v": "deep"}\n')
    tree = bad.tree([f"100644 blob {note}\t{anchor[2:]}"])
    tree = bad.nest(tree, "ab", 3000)
    root = bad.git("ls-tree", "refs/notes/meta").splitlines()
    deep = bad.tree([*root, f"040000 tree {tree}\tab"])
    bad.ref("refs/notes/meta", bad.commit(deep, bad.tip("refs/notes/meta")))
    before = snapshot(store)
    out = syncer.pull()
    warned = [o.detail for o in out if o.kind == "warning"]
    assert warned and "nested deeper than any notes layout" in warned[0]
    assert store.notes.meta(CID) == {"title": "mine"}
    assert len(store.notes.all(refs.NOTES_META)) == 1
    intact(store, before)


def test_a_chain_is_checked_only_down_to_what_the_store_has(tmp_path: Path) -> None:
    init_bare(tmp_path / "s.git")
    store = Store(tmp_path / "s.git")
    store.log.create(CID, [start(CID), *(request(f"m{n}") for n in range(300))], None, "test")
    chain = store.log.load(CID).commits
    cached = check_chain(store.repo, chain[150], Known(store.log, []), Limits())
    assert cached.reason is None and len(cached.rows) <= 1, "the cache knows these events"
    walked = check_chain(store.repo, chain[150], Known(None, [chain[100]]), Limits())
    assert walked.reason is None and [r[0] for r in walked.rows] == chain[150:100:-1]
