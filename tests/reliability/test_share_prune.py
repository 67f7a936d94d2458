"""`jp conversation share --remote` beside `git gc --prune=now`: the shared chain is
written, recorded here (which shelters it) and pushed whole, or the command fails
naming why; the remote never holds a branch whose objects are missing."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.reliability.harness import Sandbox
from tests.reliability.test_prune import pruning
from tests.support.secretcorpus import leaky_jp

GC_NOW = [["gc", "--quiet", "--prune=now"]]
KINDS = ["github token", "slack token", "stripe key", "npm token"]


def test_shares_beside_prune_now_land_whole_or_name_it(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    remote = tmp_path / "share.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    subprocess.run(["git", "--git-dir", str(box.store), "remote", "add", "share", str(remote)], check=True)
    ids = []
    for n, kind in enumerate(KINDS):
        out = box.ok("conversation", "import", str(leaky_jp(tmp_path / f"1780000096{n}-leaky", kind)))
        ids.append(out.split()[0])
    with pruning(box, GC_NOW):
        for cid in ids:
            proc = box.run("conversation", "share", cid, "--remote", "share")
            assert proc.returncode in (0, 1) and "internal error" not in proc.stderr, proc.stderr
    box.fsck()
    for cid in ids:
        box.ok("conversation", "share", cid, "--remote", "share")  # whatever the prune left, this completes
    check = subprocess.run(["git", "--git-dir", str(remote), "fsck", "--strict", "--no-progress"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    branches = subprocess.run(
        ["git", "--git-dir", str(remote), "for-each-ref", "--format=%(refname)"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert branches == sorted(f"refs/heads/jp-shared/{cid}" for cid in ids)
    box.fsck()
