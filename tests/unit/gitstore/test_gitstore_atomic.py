"""Files written whole (``gitstore/fs/atomic.py``): on a real file system."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gitstore.errors import EnvironmentFault
from gitstore.fs import atomic


def test_write_replaces_the_whole_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "state.json"
    atomic.write(path, "first")
    atomic.write(path, b"second", durable=True)
    assert path.read_bytes() == b"second"
    assert sorted(p.name for p in path.parent.iterdir()) == ["state.json"]


def test_mode_is_the_callers_or_a_plain_files_never_mkstemps(tmp_path: Path) -> None:
    atomic.write(tmp_path / "plain", "x")
    atomic.write(tmp_path / "private", "x", mode=0o600)
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) == 0o666 & ~mask
    assert stat.S_IMODE((tmp_path / "private").stat().st_mode) == 0o600


def test_unchanged_leaves_a_file_holding_the_data_alone(tmp_path: Path) -> None:
    path = tmp_path / "f"
    atomic.write(path, "same")
    inode = path.stat().st_ino
    atomic.write(path, "same", unchanged=True)
    assert path.stat().st_ino == inode
    atomic.write(path, "other", unchanged=True)
    assert path.stat().st_ino != inode and path.read_text() == "other"


def test_a_failed_rename_removes_the_temporary_and_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "folder"
    target.mkdir()
    (target / "inside").write_text("keep")
    with pytest.raises(OSError):
        atomic.write(target, "x")  # a folder that is not empty cannot be renamed over
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_is_named_as_the_environment_fault(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(EnvironmentFault) as caught:
            atomic.write(folder / "f", "x")
        assert caught.value.kind in ("read-only", "no-permission")
    finally:
        folder.chmod(0o700)


def test_replace_moves_a_finished_file_over_the_target(tmp_path: Path) -> None:
    (tmp_path / "new").write_text("new")
    (tmp_path / "old").write_text("old")
    atomic.replace(tmp_path / "new", tmp_path / "old", durable=True)
    assert [p.name for p in tmp_path.iterdir()] == ["old"]
    assert (tmp_path / "old").read_text() == "new"
