"""`jp conversation share ID --remote NAME` and `unshare` (docs/security.md, section
7): one conversation, redacted, pushed to a real bare remote as the branch
`jp-shared/ID`, which `git clone` fetches and jp's pull never does; deleted there
by unshare; undo says what it cannot take back of a remote; a kill at either
step leaves what the next command completes; hostile remote names refused."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.harness import User, write_conversation
from tests.support.secretcorpus import PLANTED, claude_code_session

pytestmark = pytest.mark.e2e

VALUES = [value for _, value in PLANTED.values()]


def _git(*args: str, cwd: Path | None = None) -> str:
    out = subprocess.run(["git", *args], capture_output=True, check=True, cwd=cwd).stdout
    return out.decode("utf-8", "replace")  # trees hold binary ids


def _bare(path: Path) -> Path:
    _git("init", "--bare", "-q", str(path))
    return path


def _leaks(data: str) -> list[str]:
    return [v for v in VALUES if v in data or json.dumps(v)[1:-1] in data]


def _refs(remote: Path) -> list[str]:
    return _git("--git-dir", str(remote), "for-each-ref", "--format=%(refname)").split()


@pytest.fixture
def shared(user: User, tmp_path: Path) -> tuple[str, Path]:
    """A Claude Code session with planted secrets, and a plain git remote `share`
    (no jp refspecs) of the store."""
    claude_code_session(tmp_path / "claude")
    user.ok("conversation", "import", "--from", "claude-code", str(tmp_path / "claude"))
    cid = user.ls()[0]["id"]
    remote = _bare(tmp_path / "share.git")
    _git("--git-dir", str(user.store), "remote", "add", "share", str(remote))
    return cid, remote


def test_share_pushes_the_redacted_chain_that_a_clone_shows_and_unshare_deletes_it(
    user: User, tmp_path: Path, shared: tuple[str, Path]
) -> None:
    cid, remote = shared
    out = user.json("conversation", "share", cid, "--remote", "share")
    assert out["ref"] == f"refs/heads/jp-shared/{cid}" and sum(out["redacted"].values()) >= 13
    assert _refs(remote) == [f"refs/heads/jp-shared/{cid}"]
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], capture_output=True, check=True)
    assert _git("branch", "-r", "--format=%(refname:short)", cwd=clone).split() == [f"origin/jp-shared/{cid}"]
    objects = _git("cat-file", "--batch-all-objects", "--batch", cwd=clone)
    assert _leaks(objects) == [] and "[redacted: github token]" in objects
    assert "deploy with this key please" in objects  # the conversation itself, not an empty chain
    commits = _git("rev-list", "--count", f"origin/jp-shared/{cid}", cwd=clone).strip()
    assert int(commits) == len(user.events(cid))
    again = user.run("conversation", "share", cid, "--remote", "share")
    assert again.returncode == 0 and "unchanged" in again.stdout
    # undo takes back the record here and says the remote's copy stays
    undone = user.run("undo")
    assert undone.returncode == 0 and f"conversation unshare {cid} --remote share" in undone.stderr
    assert _refs(remote) == [f"refs/heads/jp-shared/{cid}"]
    user.ok("conversation", "share", cid, "--remote", "share")  # recorded again, sent nothing
    gone = user.run("conversation", "unshare", cid, "--remote", "share")
    assert gone.returncode == 0 and _refs(remote) == []
    assert user.fail("conversation", "unshare", cid, "--remote", "share").returncode == 1
    # undo of the unshare brings back the record here, not the copy there, and says so
    undone = user.run("undo")
    assert undone.returncode == 0 and f"conversation share {cid} --remote share" in undone.stderr
    assert _refs(remote) == []
    assert "no longer on share" in user.ok("conversation", "unshare", cid, "--remote", "share")
    user.fsck()


def test_a_share_on_the_sync_remote_never_comes_back_by_pull(user: User, tmp_path: Path) -> None:
    origin = _bare(tmp_path / "origin.git")
    user.ok("remote", "add", "origin", str(origin))
    cid = user.import_(write_conversation(tmp_path / "17800000920-clean", 2))
    user.ok("push", "origin")
    user.ok("conversation", "share", cid, "--remote", "origin")
    assert f"refs/heads/jp-shared/{cid}" in _refs(origin)
    before = sorted(r["id"] for r in user.ls("--all"))
    user.ok("pull", "origin")
    assert sorted(r["id"] for r in user.ls("--all")) == before
    other = User(tmp_path, "other")
    other.ok("init")
    other.ok("remote", "add", "origin", str(origin))
    other.ok("pull", "origin")
    assert [r["id"] for r in other.ls("--all")] == [cid]  # no fork, no second copy
    assert "jp-shared" not in _git("--git-dir", str(other.store), "for-each-ref")
    user.ok("conversation", "unshare", cid, "--remote", "origin")
    assert f"refs/heads/jp-shared/{cid}" not in _refs(origin) and f"refs/conversations/{cid}" in _refs(origin)


@pytest.mark.parametrize(
    "name", ["--upload-pack=touch /tmp/pwned", "../share", "share;rm", "a b", "no-such-remote", ""]
)
def test_hostile_or_unknown_remote_names_are_refused(user: User, shared: tuple[str, Path], name: str) -> None:
    cid, remote = shared
    for command in ("share", "unshare"):
        proc = user.fail("conversation", command, cid, "--remote", name)
        assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr and proc.stderr.startswith("error:")
    assert _refs(remote) == [] and not Path("/tmp/pwned").exists()
    assert user.fail("conversation", "share", cid).returncode == 2  # neither -o nor --remote
    assert user.fail("conversation", "share", cid, "-o", "x.html", "--remote", "share").returncode == 2


def test_a_kill_before_the_push_or_after_the_remote_deletion_is_completed_next_time(
    user: User, shared: tuple[str, Path]
) -> None:
    cid, remote = shared
    proc = user.run("conversation", "share", cid, "--remote", "share", env={"JP_FAULT": "share:before-push"})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    user.fsck()
    assert _refs(remote) == []
    user.ok("conversation", "share", cid, "--remote", "share")
    assert _refs(remote) == [f"refs/heads/jp-shared/{cid}"]
    proc = user.run("conversation", "unshare", cid, "--remote", "share", env={"JP_FAULT": "unshare:remote-deleted"})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert _refs(remote) == []
    done = user.run("conversation", "unshare", cid, "--remote", "share")
    assert done.returncode == 0 and "no longer on share" in done.stdout
    assert "jp/shared" not in _git("--git-dir", str(user.store), "for-each-ref")
    user.fsck()


def test_a_remote_that_refuses_leaves_nothing_recorded_and_says_why(
    user: User, shared: tuple[str, Path]
) -> None:
    cid, remote = shared
    hook = remote / "hooks" / "pre-receive"
    hook.write_text('#!/bin/sh\necho "shares are closed here" >&2\nexit 1\n')
    hook.chmod(0o755)
    before = user.ok("op", "log")
    proc = user.fail("conversation", "share", cid, "--remote", "share")
    assert proc.returncode == 1 and "shares are closed here" in proc.stderr
    assert _refs(remote) == [] and user.ok("op", "log") == before  # no success claimed, no record kept
    assert "jp/shared" not in _git("--git-dir", str(user.store), "for-each-ref")


def test_a_long_conversation_is_shared_whole_and_leaves_no_pack_sheltered(user: User, tmp_path: Path) -> None:
    """Past 1,000 events the chain is written into packs: each is released once the
    record here names it, and the remote holds every commit."""
    folder = tmp_path / "17800000910-long"
    folder.mkdir()
    token = PLANTED["github token"][1]
    events: list[dict[str, str]] = []
    for t in range(370):
        at = f"2026-02-01T{10 + t // 60:02d}:{t % 60:02d}:0"
        events += [{"type": "turn_start", "timestamp": at + "1.5"},
                   {"type": "chat_request", "timestamp": at + "2.5", "content": f"q {t} {token}"},
                   {"type": "chat_response", "timestamp": at + "3.5", "message": f"a {t}"}]  # fmt: skip
    (folder / "events.json").write_text(json.dumps(events))
    (folder / "metadata.json").write_text("{}")
    cid = user.import_(folder)
    remote = _bare(tmp_path / "share.git")
    _git("--git-dir", str(user.store), "remote", "add", "share", str(remote))
    out = user.json("conversation", "share", cid, "--remote", "share")
    assert out["redacted"] == {"github token": 370}
    assert list((user.store / "objects" / "pack").glob("*.keep")) == []
    _git("--git-dir", str(remote), "fsck", "--strict", "--no-progress")
    count = _git("--git-dir", str(remote), "rev-list", "--count", f"refs/heads/jp-shared/{cid}").strip()
    assert int(count) == len(user.events(cid)) > 1000
    assert token not in _git("--git-dir", str(remote), "cat-file", "--batch-all-objects", "--batch")
    user.fsck()
