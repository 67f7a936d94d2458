"""The warm process's folder: only the user's own runtime folder, opened once."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from porcelain.models import warm_wire as wire


def test_the_runtime_folder_must_be_the_users_own_real_directory(tmp_path: Path) -> None:
    own = tmp_path / "run"
    own.mkdir(mode=0o700)
    assert wire.own_runtime_folder(str(own))
    assert not wire.own_runtime_folder("relative/run")
    assert not wire.own_runtime_folder(str(tmp_path / "missing"))
    link = tmp_path / "link"
    link.symlink_to(own)
    assert not wire.own_runtime_folder(str(link)), "a link is not followed"
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert not wire.own_runtime_folder(str(shared)), "others may write there"


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder needs chown (root)")
def test_another_users_runtime_folder_is_not_used(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 4321, -1)
    assert not wire.own_runtime_folder(str(theirs))
    env = {"XDG_RUNTIME_DIR": str(theirs)}
    assert wire.folder(env).parent != theirs


def test_the_socket_folder_is_opened_without_following_a_link(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    (run / "jp").symlink_to(elsewhere)
    assert wire.private_folder({"XDG_RUNTIME_DIR": str(run)}) is None
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o755, "no chmod through the link"
    (run / "jp").unlink()
    (run / "jp").mkdir(mode=0o755)
    made = wire.private_folder({"XDG_RUNTIME_DIR": str(run)})
    assert made == run / "jp" and stat.S_IMODE(made.stat().st_mode) == 0o700
