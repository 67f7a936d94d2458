"""What earlier session imports made is kept in the cache for the refs it was read
from (``known_imports``): the same refs read it back as it was, and refs moved by
anyone (plain git included) are read again where they moved, never taken on trust."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gitstore import Limits, Store
from gitstore.store.repo import init_bare
from porcelain.app.sessions import _KEPT, KNOWN, import_files, known_imports
from porcelain.domain.sessionfiles import find_files

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sessions" / "claude-code"


def imported(path: Path) -> tuple[Store, dict[str, str]]:
    init_bare(path)
    store = Store(path)
    files = find_files("claude-code", (FIXTURES,), [], [])
    out = import_files(store, "claude-code", files, Limits())
    assert out and all(o.action == "imported" for o in out)
    return store, {o.found.rel: str(o.cid) for o in out}


def test_the_kept_look_up_equals_one_made_afresh(tmp_path: Path) -> None:
    store, made = imported(tmp_path / "store.git")
    first = known_imports(store)  # made from the summaries, then kept
    again = known_imports(Store(tmp_path / "store.git"))  # read back as kept
    store.local.drop_cache()
    fresh = known_imports(Store(tmp_path / "store.git"))  # no cache at all
    for found in (first, again, fresh):
        assert {rel: cid for (_, rel), cid in found.by_path.items()} == made
    assert again == first == fresh


def test_a_conversation_deleted_with_plain_git_is_imported_again(tmp_path: Path) -> None:
    path = tmp_path / "store.git"
    store, made = imported(path)
    known_imports(store)
    rel, cid = sorted(made.items())[0]
    subprocess.run(
        ["git", "--git-dir", str(path), "update-ref", "-d", f"refs/conversations/{cid}"],
        check=True,
    )
    assert ("claude-code", rel) not in known_imports(Store(path)).by_path
    files = find_files("claude-code", (FIXTURES,), [], [])
    outcomes = import_files(Store(path), "claude-code", files, Limits())
    again = {o.found.rel: o.action for o in outcomes}
    assert again[rel] == "imported"
    assert {a for r, a in again.items() if r != rel} <= {"unchanged"}


def test_a_damaged_kept_entry_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / "store.git"
    store, _ = imported(path)
    kept = known_imports(store)
    for value in ({"refs": "x", "entries": [["jp-c1", 3, None, None, True]]}, {"entries": 7}):
        store.local.keep_value(KNOWN, _KEPT, value)
        assert known_imports(Store(path)) == kept
