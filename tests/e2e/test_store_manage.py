"""Managing conversations through the real `jp`: archive, rm, export and import,
use, titles and pins, grep, and what each refuses (the store's layout itself:
``test_store_cli``)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.harness import NO_MARKERS, OWN, OWN_FOLDERS, RUST, WITH_COMPACTION, User, ids_in
from tests.e2e.jpcount import entries_of, event_counts


def test_archive_and_unarchive_move_the_ref(user: User) -> None:
    cid = user.import_(RUST)
    other = user.import_(NO_MARKERS)
    tip = user.tip(cid)
    out = user.ok("conversation", "archive", cid, "--yes")
    assert cid in out
    assert user.ref(f"refs/conversations/{cid}") is None
    assert user.ref(f"refs/archive/conversations/{cid}") == tip
    log = user.git("reflog", "show", "--format=%gs", f"refs/archive/conversations/{cid}")
    assert log.startswith("jp conversation archive"), log
    assert [r["id"] for r in user.ls()] == [other]
    archived = user.ls("--archived")
    assert [(r["id"], r["archived"]) for r in archived] == [(cid, True)]
    assert user.show(cid)["archived"] is True, "show accepts an archived id"
    assert "> " in user.ok("conversation", "print", cid)
    user.ok("conversation", "unarchive", cid)
    assert user.ref(f"refs/conversations/{cid}") == tip
    assert user.ref(f"refs/archive/conversations/{cid}") is None
    assert user.show(cid)["archived"] is False
    proc = user.run("conversation", "unarchive", cid)  # a live one: a note, not an error
    assert proc.returncode == 0 and "not archived" in proc.stdout + proc.stderr
    assert user.tip(cid) == tip


def test_rm_deletes_only_that_conversation_and_asks_first(user: User) -> None:
    a = user.import_(RUST)
    b = user.import_(NO_MARKERS)
    tip = user.tip(a)
    user.fail("conversation", "rm", a, input="n\n")
    assert user.tip(a) == tip, "declining deleted the conversation"
    user.ok("conversation", "use", a)
    user.ok("conversation", "rm", a, "--yes")
    assert user.ref(f"refs/conversations/{a}") is None
    assert user.ref(f"refs/conversations/{b}") is not None
    assert [r["id"] for r in user.ls()] == [b]
    assert user.git("cat-file", "-t", tip).strip() == "commit", "objects stay until gc"
    proc = user.fail("conversation", "show")
    assert "error:" in proc.stderr
    user.fail("conversation", "rm", a, "--yes")


# -- export / import round trip ---------------------------------------------------------


def test_export_import_round_trip(user: User, tmp_path: Path) -> None:
    ids = ids_in(user.ok("conversation", "import", *map(str, OWN_FOLDERS)))
    for folder, cid in zip(OWN_FOLDERS, ids, strict=True):
        out = tmp_path / "exported" / folder.name
        user.ok("conversation", "export", cid, "--output", str(out))
        exported = json.loads((out / "events.json").read_text())
        assert exported == entries_of(folder), f"{folder.name}: export differs from the original"
        meta = json.loads((out / "metadata.json").read_text())
        assert meta["title"] == json.loads((folder / "metadata.json").read_text())["title"]
        if (folder / "base_config.json").exists():
            assert json.loads((out / "base_config.json").read_text()) == json.loads(
                (folder / "base_config.json").read_text()
            )
    assert (tmp_path / "exported" / RUST.name / "events.json").read_bytes() == (
        RUST / "events.json"
    ).read_bytes(), "JP's own layout, byte for byte"
    before = {cid: (user.show(cid), user.kinds(cid)) for cid in ids}
    user.ok("conversation", "rm", *ids, "--yes")
    again = ids_in(
        user.ok("conversation", "import", *(str(tmp_path / "exported" / f.name) for f in OWN_FOLDERS))
    )
    assert again == ids, "the exported folders keep their ids"
    for cid in again:
        info, kinds = before[cid]
        now = user.show(cid)
        assert (now["turns"], now["events"], now["compactions"]) == (
            info["turns"],
            info["events"],
            info["compactions"],
        )
        assert event_counts([{"type": k} for k in user.kinds(cid)]) == event_counts(
            [{"type": k} for k in kinds]
        )
    user.fsck()


# -- use, keywords, edit ---------------------------------------------------------------------


def test_use_and_keywords(user: User) -> None:
    old = user.import_(NO_MARKERS)  # jp-c17800000102
    new = user.import_(WITH_COMPACTION)  # jp-c17800000103: the newest id
    proc = user.fail("conversation", "show")
    assert "no active conversation" in proc.stderr
    user.ok("conversation", "use", old)
    assert user.active() == old
    assert user.show("active")["id"] == old
    assert user.show(".")["id"] == old
    assert user.git("symbolic-ref", "JP_HEAD").strip() == f"refs/conversations/{old}"
    user.ok("conversation", "use", "newest")
    assert user.active() == new
    user.ok("conversation", "archive", old, "--yes")
    assert user.show("archived")["id"] == old
    out = user.ok("conversation", "use", "archived")
    assert old in out
    assert user.active() == old
    assert user.ref(f"refs/conversations/{old}") is not None, "use restores an archived one"
    user.fail("conversation", "show", "pinned")


def test_edit_title_and_pin_live_in_notes(user: User) -> None:
    cid = user.import_(RUST)
    other = user.import_(NO_MARKERS)
    tip = user.tip(cid)
    user.ok("conversation", "edit", cid, "--title", "Renamed CLI", "--pin")
    assert user.tip(cid) == tip, "metadata is not an event"
    note = user.note("refs/notes/meta", cid)
    assert note is not None
    lines = [json.loads(line) for line in note.splitlines()]
    newest = {}
    for line in sorted(lines, key=lambda x: x["t"]):
        newest[line["k"]] = line["v"]
    assert newest["title"] == "Renamed CLI"
    assert newest["pinned_at"]
    info = user.show(cid)
    assert info["title"] == "Renamed CLI" and info["pinned"] is True
    assert user.show("pinned")["id"] == cid
    assert user.show(other)["title"] == "No turn markers"
    user.ok("conversation", "edit", cid, "--unpin", "--label", "area=cli")
    info = user.show(cid)
    assert info["pinned"] is False and info["labels"] == {"area": "cli"}
    assert info["title"] == "Renamed CLI"
    assert len((user.note("refs/notes/meta", cid) or "").splitlines()) > len(lines), "a log"
    assert user.fail("conversation", "edit", cid).returncode == 2


# -- grep ---------------------------------------------------------------------------------------


def test_grep_hits_and_exit_1_on_none(user: User) -> None:
    rust = user.import_(RUST)
    user.import_(NO_MARKERS)
    out = user.ok("conversation", "grep", "clippy")
    lines = out.splitlines()
    assert f"{rust}:7:user:What does clippy say?" in lines
    assert all(line.startswith(f"{rust}:") for line in lines)
    hits = user.json("conversation", "grep", "E0432")
    assert hits and {h["scope"] for h in hits} >= {"tool-result"}
    assert all(h["id"] == rust and isinstance(h["turn"], int) and h["turn"] >= 1 for h in hits)
    proc = user.run("conversation", "grep", "zz-no-such-text-qq")
    assert proc.returncode == 1 and proc.stdout == ""
    assert user.run("conversation", "grep", "--regex", "([").returncode not in (0, 1)


# -- refusals --------------------------------------------------------------------------------


def test_malformed_imports_are_refused_whole(user: User, tmp_path: Path) -> None:
    good = user.import_(RUST)
    before = user.refs()
    broken = tmp_path / "17800000201-broken"
    broken.mkdir()
    (broken / "events.json").write_text('[{"type": "turn_start", "timestamp": "2026-01-01 10:00:00.0"},\n')
    (broken / "metadata.json").write_text("{}\n")
    proc = user.fail("conversation", "import", str(broken))
    assert "events.json" in proc.stderr and "17800000201-broken" in proc.stderr
    assert "line 2" in proc.stderr

    bad_body = tmp_path / "17800000202-bad-body"
    bad_body.mkdir()
    entries = [
        {"type": "turn_start", "timestamp": "2026-01-01 10:00:00.0"},
        {"type": "chat_request", "timestamp": "2026-01-01 10:00:01.0", "content": 5},
    ]
    (bad_body / "events.json").write_text(json.dumps(entries))
    (bad_body / "metadata.json").write_text("{}\n")
    proc = user.fail("conversation", "import", str(NO_MARKERS), str(bad_body))
    assert "17800000202-bad-body" in proc.stderr and "events.json" in proc.stderr
    assert "entry 1" in proc.stderr and "chat_request" in proc.stderr

    two_variants = tmp_path / "17800000203-two-variants"
    two_variants.mkdir()
    entry = {"type": "chat_response", "timestamp": "2026-01-01 10:00:01.0", "message": "a"}
    (two_variants / "events.json").write_text(json.dumps([{**entry, "reasoning": "b"}]))
    proc = user.fail("conversation", "import", str(two_variants))
    assert "17800000203-two-variants" in proc.stderr

    bad_meta = tmp_path / "17800000204-bad-meta"
    bad_meta.mkdir()
    (bad_meta / "events.json").write_text("[]")
    (bad_meta / "metadata.json").write_text('{"title": 7}')
    proc = user.fail("conversation", "import", str(bad_meta))
    assert "metadata.json" in proc.stderr

    user.fail("conversation", "import", str(tmp_path / "missing"))
    assert user.refs() == before, "a refused import changed the store"
    assert [r["id"] for r in user.ls()] == [good]
    user.fsck()


def test_invalid_ids_are_refused(user: User) -> None:
    cid = user.import_(RUST)
    user.ok("conversation", "use", cid)
    before = user.refs()
    head = (user.store / "HEAD").read_text()
    bad = "../../HEAD"
    commands = [
        ["conversation", "show", bad],
        ["conversation", "print", bad],
        ["conversation", "fork", bad],
        ["conversation", "archive", bad, "--yes"],
        ["conversation", "unarchive", bad],
        ["conversation", "rm", bad, "--yes"],
        ["conversation", "edit", bad, "--title", "x"],
        ["conversation", "export", bad, "--output", str(user.root / "out")],
        ["conversation", "compact", bad],
        ["q", "--id", bad, "hello"],
    ]
    for other in ("refs/heads/main", "", "jp-c1/../../x", "JP-C1", "jp-c1 x"):
        commands += [["conversation", "show", other], ["conversation", "rm", other, "--yes"]]
    for args in commands:
        proc = user.fail(*args)
        assert "not a conversation id" in proc.stderr, (args, proc.stderr)
    assert user.refs() == before
    assert (user.store / "HEAD").read_text() == head
    assert not (user.root / "out").exists()
    assert user.active() == cid


def test_use_refuses_an_empty_id(user: User) -> None:
    a = user.import_(RUST)
    b = user.import_(NO_MARKERS)
    user.ok("conversation", "use", a)
    user.ok("conversation", "use", b)
    proc = user.run("conversation", "use", "")
    assert proc.returncode != 0 and "not a conversation id" in proc.stderr
    assert user.active() == b


def test_own_fixtures_exist() -> None:
    assert sorted(p.name for p in OWN.iterdir()) == sorted(f.name for f in OWN_FOLDERS)
