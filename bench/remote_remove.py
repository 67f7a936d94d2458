"""Removing a remote's copies: jp's ``drop_copies`` against git deleting the same refs.

A bare store of ``TOTAL`` packed refs, ``COPIES`` of them copies of ``origin``
(``refs/jp-remotes/origin/...``).  jp deletes them with
``sync/remotes.py:drop_copies`` (what `jp remote remove` and a rename run); git
with one ``git update-ref --stdin`` of as many ``delete`` lines.  Each side runs
in a child process on its own fresh copy of the store, turn about; CPU of the
process and its children, medians of ``ROUNDS``.

    .venv/bin/python -m bench.remote_remove [--quick]
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import ROOT, cpu_now

SIZES = {"full": (100_000, 10_000), "quick": (20_000, 2_000)}
ROUNDS = 3

_JP = """
import sys
import pygit2
from gitstore.sync import remotes
assert remotes.drop_copies(pygit2.Repository(sys.argv[1]), "origin") == int(sys.argv[2])
"""


def _store(path: Path, total: int, copies: int) -> list[str]:
    """The store, and the names of its copies."""
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    git = ["git", "--git-dir", str(path), "-c", "user.name=b", "-c", "user.email=b@x"]
    tree = subprocess.run([*git, "hash-object", "-t", "tree", "-w", "/dev/null"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    tip = subprocess.run([*git, "commit-tree", tree, "-m", "b"],
                         capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    kept = [f"refs/conversations/jp-{n:08x}" for n in range(total - copies)]
    gone = [f"refs/jp-remotes/origin/conversations/jp-{n:08x}" for n in range(copies)]
    lines = "".join(f"{tip} {name}\n" for name in sorted(kept + gone))
    (path / "packed-refs").write_text("# pack-refs with: peeled fully-peeled sorted \n" + lines)
    return gone


def _cpu(argv: list[str], stdin: str = "") -> float:
    before = cpu_now()
    subprocess.run(argv, input=stdin, text=True, check=True, cwd=ROOT)
    return cpu_now() - before


def main() -> None:
    total, copies = SIZES["quick" if "--quick" in sys.argv else "full"]
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template.git"
        gone = _store(template, total, copies)
        deletions = "".join(f"delete {name}\n" for name in gone)
        samples: dict[str, list[float]] = {"jp": [], "git": []}
        for n in range(ROUNDS):
            for side in ("jp", "git") if n % 2 == 0 else ("git", "jp"):
                store = Path(tmp) / f"{side}{n}.git"
                shutil.copytree(template, store)
                if side == "jp":
                    samples[side].append(_cpu([sys.executable, "-c", _JP, str(store), str(copies)]))
                else:
                    argv = ["git", "--git-dir", str(store), "update-ref", "--stdin"]
                    samples[side].append(_cpu(argv, deletions))
                shutil.rmtree(store)
    jp, git = (statistics.median(samples[side]) for side in ("jp", "git"))
    print(f"{copies:,} copies among {total:,} packed refs: jp {jp:.3f} s, git {git:.3f} s "
          f"(CPU, medians of {ROUNDS}): {jp / git:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
