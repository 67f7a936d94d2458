"""`jp conversation redact` beside `git gc --prune=now`: each redaction lands whole
(its new commits sheltered until the ref names them) or fails naming the prune;
never a conversation pointing at missing objects, never half redacted."""

from __future__ import annotations

import json
from pathlib import Path

from tests.reliability.harness import Sandbox
from tests.reliability.test_prune import pruning
from tests.support.secretcorpus import PLANTED, leaky_jp

# git's gc with --prune=now, which a write waits out (gc.pid); a bare `git prune
# --expire=now` holds no gc.pid, and a write beside it is not defended
# (docs/reliability.md)
GC_NOW = [["gc", "--quiet", "--prune=now"]]
KINDS = ["github token", "slack token", "stripe key", "npm token"]


def test_redactions_beside_prune_now_land_whole_or_name_it(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    ids = []
    for n, kind in enumerate(KINDS):
        out = box.ok("conversation", "import", str(leaky_jp(tmp_path / f"1780000097{n}-leaky", kind)))
        ids.append(out.split()[0])
    with pruning(box, GC_NOW):
        for cid in ids:
            proc = box.run("conversation", "redact", cid)
            if proc.returncode != 0:
                assert "internal error" not in proc.stderr and "prune" in proc.stderr, proc.stderr
    box.fsck()
    for cid, kind in zip(ids, KINDS, strict=True):
        box.ok("conversation", "redact", cid)  # whatever the prune left, this completes
        text = json.dumps(box.json("conversation", "print", cid))
        assert PLANTED[kind][1] not in text and f"[redacted: {kind}]" in text
    box.fsck()
