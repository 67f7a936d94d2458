"""Local state of this machine, never synced.

``<gitdir>/jp/state.json`` holds when each conversation was last activated;
``jp conversation ls`` and the choice of a default conversation read it.  The
time is the store's clock's.

``<gitdir>/jp/accepted`` lists commits the user accepted: the porcelain adds
the commits its own commands wrote and those it named to the user once (a
conversation's recorded model, docs/security.md).  One id a line, appended
with ``O_APPEND`` so concurrent writers lose none; a line that is not a
commit id is skipped.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.clock import seconds
from gitstore.fs import atomic

if TYPE_CHECKING:
    from gitstore.store.core import Store


def _state_path(store: Store) -> Path:
    return store.gitdir / "jp" / "state.json"


def activations(store: Store) -> dict[str, float]:
    """When each conversation was last activated on this machine (epoch seconds)."""
    try:
        data = json.loads(_state_path(store).read_text())
        return {str(k): float(v) for k, v in data.get("activated", {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def record_activation(store: Store, cid: str) -> None:
    path = _state_path(store)
    data = activations(store)
    data[cid] = seconds(store.clock)
    atomic.write(path, json.dumps({"activated": data}))


_COMMIT_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
ACCEPTED_MAX_BYTES = 64 * 1024 * 1024  # far past any real list; a bigger file is not read


def _accepted_path(store: Store) -> Path:
    return store.gitdir / "jp" / "accepted"


def accepted_commits(store: Store) -> frozenset[str]:
    """The commits the user accepted on this machine (empty when none or unreadable)."""
    try:
        with open(_accepted_path(store), "rb") as file:
            data = file.read(ACCEPTED_MAX_BYTES)
    except OSError:
        return frozenset()
    lines = data.decode("ascii", "replace").split("\n")
    return frozenset(line for line in lines if _COMMIT_RE.fullmatch(line))


def accept_commits(store: Store, commits: Iterable[str]) -> None:
    """Add ``commits`` to the accepted list (ids that are not commit ids are left out)."""
    lines = "".join(f"{c}\n" for c in commits if _COMMIT_RE.fullmatch(c))
    if not lines:
        return
    path = _accepted_path(store)
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        os.write(fd, lines.encode("ascii"))
    finally:
        os.close(fd)
