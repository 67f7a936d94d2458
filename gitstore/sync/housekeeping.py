"""Whether ``git gc --auto`` would do anything, answered without starting it.

After every sync jp hands the store to git's own housekeeping (libgit2 never
packs).  Most syncs leave nothing for it to do, and starting a git only to
hear that is one process of the few a no-op pull costs.  git's own test is
cheap and is made here the same way: ``gc.auto`` (6700 unless set; 0 turns
it off) loose objects, estimated from the one fan-out folder ``objects/17``
as git estimates them, or more than ``gc.autoPackLimit`` (50 unless set; 0:
no limit) packs without a ``.keep``.  Whatever this cannot read for sure
leaves the decision to git.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pygit2

GC_AUTO = 6700  # git's defaults
AUTO_PACK_LIMIT = 50
_LOOSE = re.compile(r"[0-9a-f]{38}")


def _setting(config: pygit2.Config, name: str, default: int) -> int | None:
    try:
        return config.get_int(name) if name in config else default
    except (pygit2.GitError, ValueError):
        return None


def gc_due(gitdir: Path, config: pygit2.Config) -> bool:
    """Whether ``git gc --auto`` in ``gitdir`` may find work (True when unsure)."""
    auto = _setting(config, "gc.auto", GC_AUTO)
    limit = _setting(config, "gc.autoPackLimit", AUTO_PACK_LIMIT)
    if auto is None or limit is None:
        return True
    if auto <= 0:
        return False  # git's housekeeping is off
    objects = gitdir / "objects"
    try:
        loose = sum(1 for n in os.listdir(objects / "17") if _LOOSE.fullmatch(n))
    except FileNotFoundError:
        loose = 0
    except OSError:
        return True
    if loose > (auto + 255) // 256:
        return True
    if limit <= 0:
        return False
    try:
        names = set(os.listdir(objects / "pack"))
    except FileNotFoundError:
        return False
    except OSError:
        return True
    packs = [n for n in names if n.endswith(".pack") and n[:-5] + ".keep" not in names]
    return len(packs) > limit
