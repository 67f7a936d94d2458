"""An import of many JP folders writes one set of packs and creates its refs in one
update (``Log.batch``), whatever the number of folders; `jp undo` takes them all
back; `jp doctor` names a store whose git maintenance is due."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.harness import User, ids_in
from tests.support.jpfolders import small_jp_folders


def _folders(root: Path, count: int) -> list[Path]:
    return small_jp_folders(root, count, "batch")


def _packs(user: User) -> set[str]:
    return {p.name for p in (user.store / "objects" / "pack").glob("*.pack")}


def test_an_import_of_many_folders_writes_a_few_packs_and_undo_takes_it_back(
    user: User, tmp_path: Path
) -> None:
    user.git("config", "gc.auto", "0")  # the pack count is this command's own
    folders = _folders(tmp_path, 40)
    before = _packs(user)
    out = user.ok("conversation", "import", *map(str, folders))
    made = ids_in(out)
    assert made == [f"jp-c{17727391000 + n}" for n in range(40)]
    added = _packs(user) - before
    # the conversations' packs: not one per folder
    assert 1 <= len(added) <= 4, sorted(added)
    # their objects are all packed (the titles' notes and the operation record are
    # libgit2's ordinary loose writes, which git's gc packs in its own time)
    loose = {p.parent.name + p.name for p in (user.store / "objects").glob("[0-9a-f][0-9a-f]/*")}
    listed = user.git("rev-list", "--objects", *(f"refs/conversations/{c}" for c in made))
    assert loose.isdisjoint(line.split()[0] for line in listed.splitlines()), "loose objects"
    for n, cid in enumerate(made):
        assert [e["type"] for e in user.events(cid)][1:] == ["chat_request", "chat_response"]
        assert f"batch {n}" in (user.note("refs/notes/meta", cid) or "")
        assert user.git("reflog", "show", f"refs/conversations/{cid}").strip()
    user.fsck()
    assert {r["id"] for r in user.ls()} == set(made)
    user.ok("undo")
    assert user.ls() == []
    user.fsck()
    again = ids_in(user.ok("conversation", "import", *map(str, folders)))
    assert again == made, "after the undo the same ids are free again"


def test_the_same_folder_twice_in_one_import_is_written_once(user: User, tmp_path: Path) -> None:
    folder = _folders(tmp_path, 1)[0]
    proc = user.run("conversation", "import", str(folder), str(folder))
    assert proc.returncode == 0, proc.stderr
    assert ids_in(proc.stdout) == ["jp-c17727391000", "jp-c17727391000"]
    assert "already in the store" in proc.stderr
    assert len(user.ls()) == 1


def test_doctor_names_a_store_whose_maintenance_is_due_and_fix_runs_it(
    user: User, tmp_path: Path
) -> None:
    user.git("config", "gc.auto", "0")  # no maintenance before doctor's
    for folder in _folders(tmp_path, 4):
        user.ok("conversation", "import", str(folder))
    user.git("config", "gc.auto", "6700")
    user.git("config", "gc.autoPackLimit", "2")
    report = user.json("doctor", "--no-fsck")
    due = [f for f in report["findings"] if f["check"] == "maintenance"]
    assert due and due[0]["severity"] == "note" and report["healthy"], report
    user.ok("doctor", "--fix", "--no-fsck")
    assert len(_packs(user)) <= 2
    report = user.json("doctor")
    assert not [f for f in report["findings"] if f["check"] == "maintenance"], report
