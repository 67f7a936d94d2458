"""git's maintenance as the store runs it: with no git, nothing is packed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitstore.store.core import Store
from tests.unit.gitstore.builders import start


def test_with_no_git_the_refs_stay_loose(
    store: Store, path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """libgit2's ``compress_references`` read ``packed-refs`` before it took the
    file's lock (a ref moved meanwhile went back): without git, jp packs nothing,
    and its refs stay loose files, as written."""
    tip = store.log.create("jp-c1", [start("jp-c1")], None, "create")
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert store.local.maintain(force=True, wait=True) == ""
    assert (path / "refs" / "conversations" / "jp-c1").read_text().strip() == tip
    assert not (path / "packed-refs").exists()
