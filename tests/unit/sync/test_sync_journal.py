"""The remote's change journal: written by every push in the same atomic push as
the refs it names, read by a pull that then fetches only those refs; a reconcile
(``full``) lists everything and repairs what the journal did not say."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from gitstore.git import refs
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import fetch, journal, remotes
from gitstore.sync.here import Here
from gitstore.sync.plan import RemoteUpdate
from gitstore.sync.pull import Outcome, Syncer
from gitstore.sync.push import push
from gitstore.sync.transport import choose
from tests.support.servers.fixtures import Remote, every_remote
from tests.unit.sync.hostile import Hostile, request

GIT = shutil.which("git")
Make = Callable[[str], tuple[Store, Syncer]]
pytestmark = pytest.mark.skipif(GIT is None, reason="the journal is read through git")


def start(cid: str) -> dict[str, object]:
    return {
        "type": "conversation_start",
        "timestamp": "2026-01-05T09:00:00Z",
        "conversation_id": cid,
    }


def new(store: Store, cid: str, text: str) -> str:
    return store.log.create(cid, [start(cid), request(text)], None, "test")


def add(store: Store, cid: str, text: str) -> str:
    return store.log.append(cid, [request(text)], store.refs.require(cid).tip, "test")


def pulled(outcomes: list[Outcome]) -> dict[str, str]:
    return {o.id: o.action for o in outcomes if o.kind == "conversation" and o.direction == "pull"}


def copies(syncer: Syncer) -> set[str]:
    rows = syncer.transport.list_refs([syncer.tracking + "conversations/"])
    return {r.name.rsplit("/", 1)[1] for r in rows}


@pytest.fixture
def machine(tmp_path: Path, bare_remote: Remote) -> Make:
    def make(name: str) -> tuple[Store, Syncer]:
        init_bare(tmp_path / name)
        store = Store(tmp_path / name)
        remotes.add(store.repo, "origin", bare_remote.url)
        return store, Syncer(Here.of(store), "origin", choose(store.repo, GIT), journal_from=0)

    return make


@pytest.fixture
def pair(machine: Make) -> tuple[Store, Syncer, Store, Syncer]:
    """Two machines that share jp-c1 and jp-c2 and have each pulled once."""
    a, sa = machine("a")
    b, sb = machine("b")
    new(a, "jp-c1", "one")
    new(a, "jp-c2", "two")
    push(sa)
    sb.pull()
    return a, sa, b, sb


@pytest.fixture
def moved(pair: tuple[Store, Syncer, Store, Syncer]) -> tuple[Store, Syncer]:
    """``pair`` after the first machine pushed a new event of jp-c1: the second one."""
    a, sa, b, sb = pair
    add(a, "jp-c1", "more")
    push(sa)
    return b, sb


def drift(remote: Remote) -> Hostile:
    """Plain git moves jp-c2 on the remote, with no journal entry."""
    bad = Hostile(remote.path, journal=False)
    bad.ref(refs.live("jp-c2"), bad.event(request("unjournaled"), bad.tip(refs.live("jp-c2"))))
    return bad


def remote_journal(remote: Remote) -> list[str]:
    """Every name in the remote's journal, newest entry first."""
    hostile = Hostile(remote.path)
    log = hostile.git("log", "--format=%B%x00", journal.REMOTE_REF)
    bodies = (entry.lstrip("\n").partition("\n\n")[2] for entry in log.split("\0"))
    return [line for body in bodies for line in body.split("\n") if line]


@every_remote
def test_a_push_names_what_it_moved_and_a_pull_fetches_only_that(
    moved: tuple[Store, Syncer], bare_remote: Remote
) -> None:
    b, sb = moved
    assert remote_journal(bare_remote)[0] == refs.live("jp-c1")
    # plain git moves jp-c2 without a journal entry: a journal pull does not fetch it
    bad = drift(bare_remote)
    before = b.refs.require("jp-c2").tip
    assert pulled(sb.pull()) == {"jp-c1": "fast-forwarded"}
    assert sb.scope == {"conversations/jp-c1"}, "only the journal's names were checked"
    assert b.refs.require("jp-c2").tip == before
    assert sb.journal_tip() == bad.tip(journal.REMOTE_REF)
    # nothing moved since: nothing fetched, nothing checked
    assert sb.pull() == [] and sb.scope == set()
    # a reconcile lists everything and brings the drift in
    assert pulled(sb.pull(full=True)) == {"jp-c2": "fast-forwarded"}


def test_a_remote_smaller_than_journal_from_is_listed_whole_on_every_pull(
    pair: tuple[Store, Syncer, Store, Syncer], bare_remote: Remote
) -> None:
    a, sa, b, sb = pair
    assert journal.refs_at_reconcile(b.gitdir, "origin") == 2  # counted by the first pull
    drift(bare_remote)
    small = Syncer(Here.of(b), "origin", sb.transport, journal_from=3)
    assert pulled(small.pull()) == {"jp-c2": "fast-forwarded"}, "plain git's move seen at once"
    assert small.scope is None and journal.pulls_since_reconcile(b.gitdir, "origin") == 0
    # at or over the limit the journal decides again
    add(a, "jp-c1", "more")
    push(sa)
    at = Syncer(Here.of(b), "origin", sb.transport, journal_from=2)
    assert pulled(at.pull()) == {"jp-c1": "fast-forwarded"} and at.scope == {"conversations/jp-c1"}


def test_a_pull_reconciles_every_so_often(
    pair: tuple[Store, Syncer, Store, Syncer], bare_remote: Remote
) -> None:
    a, sa, b, sb = pair
    drift(bare_remote)
    for _ in range(journal.RECONCILE_EVERY):
        journal.record_pull(b.gitdir, "origin", reconciled=False)
    assert pulled(sb.pull()) == {"jp-c2": "fast-forwarded"} and sb.scope is None
    assert journal.pulls_since_reconcile(b.gitdir, "origin") == 0


def test_a_remote_without_a_journal_is_pulled_whole(machine: Make, bare_remote: Remote) -> None:
    """A remote only plain git (or a jp before the journal) wrote."""
    a, sa = machine("a")
    b, sb = machine("b")
    new(a, "jp-c1", "one")
    push(sa)
    bad = Hostile(bare_remote.path, journal=False)
    bad.git("update-ref", "-d", journal.REMOTE_REF)
    sb.pull()
    new(a, "jp-c2", "two")
    sa.transport.push("origin", [*_plain(a, "jp-c2")])
    assert pulled(sb.pull()) == {"jp-c2": "created"} and sb.scope is None


def _plain(store: Store, cid: str) -> list[RemoteUpdate]:
    """The push of one ref as plain git makes it (no journal entry)."""
    return [RemoteUpdate(refs.live(cid), store.refs.require(cid).tip)]


@pytest.mark.parametrize(
    "entry, problem",
    [
        ("not a journal\n\nrefs/conversations/jp-c2\n", "not a journal entry"),
        ("jp journal: 1 refs\n\nrefs/heads/main\n", "outside jp's namespaces"),
        ("jp journal: 1 refs\n\nrefs/conversations/jp-c2*\n", "not a plain ref name"),
        ("jp journal: 1 refs\n\n" + "refs/conversations/jp-c2\n" * 5001, "an entry of 5001"),
    ],
    ids=["not-an-entry", "outside", "glob", "huge"],
)
def test_a_hostile_journal_is_refused_in_one_line_and_the_pull_is_whole(
    pair: tuple[Store, Syncer, Store, Syncer], bare_remote: Remote, entry: str, problem: str
) -> None:
    a, sa, b, sb = pair
    bad = drift(bare_remote)
    forged = bad.commit(bad.tree([]), bad.tip(journal.REMOTE_REF), message=entry)
    bad.ref(journal.REMOTE_REF, forged)
    out = sb.pull()
    warnings = [o for o in out if o.kind == "warning"]
    assert len(warnings) == 1 and warnings[0].id == journal.REMOTE_REF
    assert problem in warnings[0].detail and "\n" not in warnings[0].detail
    assert pulled(out) == {"jp-c2": "fast-forwarded"}, "the pull fetched everything instead"
    # set aside: no copy of it, so no pull starts from it (each says so while it stays)
    assert sb.journal_tip() is None and sb.journal_aside == forged
    assert [o.id for o in sb.pull()] == [journal.REMOTE_REF]
    push(sa)  # a push replaces it by a new chain: no warning after
    assert bad.tip(journal.REMOTE_REF) != forged
    assert sb.pull() == [] and sb.journal_tip() == bad.tip(journal.REMOTE_REF)


def test_a_journal_naming_refs_that_do_not_exist_fetches_what_does(
    moved: tuple[Store, Syncer], bare_remote: Remote
) -> None:
    b, sb = moved
    bad = Hostile(bare_remote.path)
    bad.journal(refs.live("jp-c404"), refs.archived("jp-c405"), "refs/notes/meta")
    assert pulled(sb.pull()) == {"jp-c1": "fast-forwarded"}
    assert "jp-c404" not in copies(sb) and not b.refs.exists("jp-c404")


def test_a_journal_rewritten_below_the_copy_means_a_reconcile(
    pair: tuple[Store, Syncer, Store, Syncer], bare_remote: Remote
) -> None:
    a, sa, b, sb = pair
    bad = drift(bare_remote)
    bad.ref(journal.REMOTE_REF, bad.commit(bad.tree([]), message=journal.message([])))
    out = sb.pull()
    assert pulled(out) == {"jp-c2": "fast-forwarded"} and sb.scope is None
    assert not [o for o in out if o.kind == "warning"], "a rewrite is no attack"


@every_remote
def test_pushes_racing_for_the_journal_both_land(machine: Make, bare_remote: Remote) -> None:
    a, sa = machine("a")
    b, sb = machine("b")
    c, sc = machine("c")
    new(a, "jp-c1", "one")
    push(sa)
    sb.pull()
    sc.pull()
    add(a, "jp-c1", "from a")
    new(b, "jp-c2", "from b")
    # b pushes between a's pull and a's push: a's journal entry no longer fits on top
    real = sa.pull

    def pull_then_b_pushes(full: bool = False) -> list[Outcome]:
        out = real(full)
        if not getattr(sa, "raced", False):
            sa.raced = True  # type: ignore[attr-defined]
            push(sb)
        return out

    sa.pull = pull_then_b_pushes  # type: ignore[method-assign]
    out = push(sa)
    assert {o.id: o.action for o in out if o.direction == "push"} == {"jp-c1": "fast-forwarded"}
    names = remote_journal(bare_remote)
    assert refs.live("jp-c1") in names[:2] and refs.live("jp-c2") in names[:2]
    assert pulled(sc.pull()) == {"jp-c1": "fast-forwarded", "jp-c2": "created"}
    assert sc.scope is not None, "both moves were in the journal"


def test_a_pull_killed_after_the_journal_came_walks_it_again(
    pair: tuple[Store, Syncer, Store, Syncer], bare_remote: Remote
) -> None:
    a, sa, b, sb = pair
    add(a, "jp-c1", "more")
    push(sa)
    fetch.fetch_journal(sb.transport, "origin", sb.here.place.gitdir)
    assert sb.journal_tip(journal.INCOMING) != sb.journal_tip()
    assert pulled(sb.pull()) == {"jp-c1": "fast-forwarded"}


def drift_notes(outcomes: list[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if o.kind == "warning" and o.action == "drift"]


@every_remote
def test_a_reconcile_names_the_refs_the_journal_did_not(
    moved: tuple[Store, Syncer], bare_remote: Remote
) -> None:
    b, sb = moved
    drift(bare_remote)  # plain git moves jp-c2; jp-c1 moved with its journal entry
    outcomes = sb.pull(full=True)
    assert pulled(outcomes) == {"jp-c1": "fast-forwarded", "jp-c2": "fast-forwarded"}
    (note,) = drift_notes(outcomes)
    assert note.id == journal.REMOTE_REF and "\n" not in note.detail
    assert note.detail.startswith("1 ref moved on origin without a journal entry")
    assert refs.live("jp-c2") in note.detail and "jp-c1" not in note.detail
    assert drift_notes(sb.pull(full=True)) == [], "a reconcile that found nothing says nothing"


def test_moves_the_journal_named_are_no_drift(
    pair: tuple[Store, Syncer, Store, Syncer],
) -> None:
    a, sa, b, sb = pair
    add(a, "jp-c1", "more")
    new(a, "jp-c3", "three")
    push(sa)
    outcomes = sb.pull(full=True)
    assert pulled(outcomes) == {"jp-c1": "fast-forwarded", "jp-c3": "created"}
    assert drift_notes(outcomes) == []


def test_a_first_pull_and_a_remote_without_a_journal_report_no_drift(
    machine: Make, bare_remote: Remote
) -> None:
    a, sa = machine("a")
    new(a, "jp-c1", "one")
    new(a, "jp-c2", "two")
    push(sa)
    b, sb = machine("b")
    assert drift_notes(sb.pull()) == [], "everything is new to a first pull, none of it drift"
    Hostile(bare_remote.path).git("update-ref", "-d", journal.REMOTE_REF)
    drift(bare_remote)
    outcomes = sb.pull()
    assert pulled(outcomes) == {"jp-c2": "fast-forwarded"} and drift_notes(outcomes) == []


def chain_length(remote: Remote) -> int:
    return int(Hostile(remote.path).git("rev-list", "--count", journal.REMOTE_REF))


@every_remote
def test_the_journal_is_trimmed_by_a_new_root_and_readers_behind_it_reconcile(
    machine: Make, bare_remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal, "TRIM_AT", 3)
    a, sa = machine("a")
    b, sb = machine("b")
    c, sc = machine("c")
    new(a, "jp-c1", "one")
    push(sa)
    sb.pull(), sc.pull()
    for n in range(4):  # entries at depth 1, 2, then a new root, then 1 again
        add(a, "jp-c1", f"more {n}")
        push(sa)
        if n == 1:
            assert chain_length(bare_remote) == 3
            sb.pull()  # b's copy is now the tip the new root will record as its base
    assert chain_length(bare_remote) == 2, "the old chain is no longer the journal's"
    root = Hostile(bare_remote.path).git("rev-list", "--max-parents=0", journal.REMOTE_REF)
    head = Hostile(bare_remote.path).git("log", "-1", "--format=%B", root.strip())
    assert f"base: {sb.journal_tip()}" in head
    new(a, "jp-c2", "two")
    push(sa)
    # b read up to the base: it walks on across the new root, fetching only what moved
    assert pulled(sb.pull()) == {"jp-c1": "fast-forwarded", "jp-c2": "created"}
    assert sb.scope == {"conversations/jp-c1", "conversations/jp-c2"}
    assert journal.pulls_since_reconcile(b.gitdir, "origin") > 0
    # c is further behind: its copy is below no entry now, so it reconciles
    assert pulled(sc.pull()) == {"jp-c1": "fast-forwarded", "jp-c2": "created"}
    assert sc.scope is None and journal.pulls_since_reconcile(c.gitdir, "origin") == 0
    assert b.refs.require("jp-c1").tip == c.refs.require("jp-c1").tip == a.refs.require("jp-c1").tip


def test_two_pushers_trimming_at_once_both_land(
    machine: Make, bare_remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each new root carries a lease on the tip it replaces: the second loses the race,
    pulls again and lands on top of the first one's root."""
    monkeypatch.setattr(journal, "TRIM_AT", 2)
    a, sa = machine("a")
    b, sb = machine("b")
    new(a, "jp-c1", "one")
    push(sa)
    sb.pull()
    add(a, "jp-c1", "a1")
    push(sa)
    sb.pull()  # both now at depth 1: the next push of each starts a new root
    new(a, "jp-c2", "from a")
    new(b, "jp-c3", "from b")
    push(sa)
    assert [o.action for o in push(sb) if o.direction == "push"] == ["created"]
    names = set(remote_journal(bare_remote))
    assert {refs.live("jp-c2"), refs.live("jp-c3")} <= names
    assert pulled(sa.pull()) == {"jp-c3": "created"}
