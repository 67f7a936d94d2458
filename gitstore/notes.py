"""Git notes on conversation anchors, written with our own compare-and-swap.

libgit2's ``create_note`` loses notes under concurrent writers, so a note is
written as a commit on the notes ref whose tree maps the annotated object's
hex id to the note blob, moved with the same CAS-and-retry as an append.
Trees written by git itself may use fan-out directories (``ab/cdef...``);
both layouts are read, and ours replaces either.

Metadata notes (``refs/notes/meta``) hold one JSON object per line,
``{"k": key, "v": value, "t": unix-ms, "m": machine}``; the newest line per
key wins (ties broken by machine), and two notes merge by the union of their
lines, like ``git notes merge -s cat_sort_uniq``.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

import pygit2

from gitstore import faults
from gitstore.errors import ConcurrentUpdate

RETRIES = 60


def _text(repo: pygit2.Repository, oid: pygit2.Oid) -> str:
    blob = repo[oid]
    assert isinstance(blob, pygit2.Blob)
    return bytes(blob.data).decode("utf-8", "replace")


def _tree_entries(repo: pygit2.Repository, tree: pygit2.Tree) -> dict[str, pygit2.Oid]:
    """Annotated hex id -> note blob id, over flat and fan-out layouts."""
    out: dict[str, pygit2.Oid] = {}

    def walk(t: pygit2.Tree, prefix: str) -> None:
        for entry in t:
            name = prefix + (entry.name or "")
            sub = repo[entry.id]
            if isinstance(sub, pygit2.Tree):
                walk(sub, name)
            elif entry.type_str == "blob":
                out[name] = entry.id

    walk(tree, "")
    return out


def read_all(repo: pygit2.Repository, ref: str) -> dict[str, str]:
    """Every note under ``ref``: annotated hex id -> text."""
    try:
        commit = repo.lookup_reference(ref).peel(pygit2.Commit)
    except (KeyError, pygit2.InvalidSpecError, ValueError):
        return {}
    entries = _tree_entries(repo, commit.tree)
    return {k: _text(repo, v) for k, v in entries.items()}


def read(repo: pygit2.Repository, ref: str, target: str) -> str | None:
    try:
        commit = repo.lookup_reference(ref).peel(pygit2.Commit)
    except (KeyError, pygit2.InvalidSpecError, ValueError):
        return None
    tree = commit.tree
    for path in (target, f"{target[:2]}/{target[2:]}", f"{target[:2]}/{target[2:4]}/{target[4:]}"):
        try:
            entry = tree[path]
        except KeyError:
            continue
        return _text(repo, entry.id)
    return None


def update(
    repo: pygit2.Repository,
    ref: str,
    changes: Callable[[dict[str, str]], dict[str, str | None]],
    signature: pygit2.Signature,
    message: str,
) -> None:
    """Apply ``changes(current notes) -> {target: new text or None to remove}`` with CAS."""
    for attempt in range(RETRIES):
        try:
            current = repo.lookup_reference(ref)
            parent: pygit2.Commit | None = current.peel(pygit2.Commit)
        except KeyError:
            parent = None
        existing = _tree_entries(repo, parent.tree) if parent is not None else {}
        texts = {k: _text(repo, v) for k, v in existing.items()}
        wanted = changes(texts)
        if not wanted:
            return
        entries = dict(existing)
        for target, text in wanted.items():
            if text is None:
                entries.pop(target, None)
            else:
                entries[target] = repo.create_blob(text.encode())
        builder = repo.TreeBuilder()
        for name, blob in sorted(entries.items()):
            builder.insert(name, blob, pygit2.GIT_FILEMODE_BLOB)
        tree = builder.write()
        faults.point("notes:objects-written")
        try:
            if parent is None:
                oid = repo.create_commit(None, signature, signature, message, tree, [])
                repo.create_reference_direct(ref, oid, False, message=message)
            else:
                oid = repo.create_commit(None, signature, signature, message, tree, [parent.id])
                # set_target moves the ref only if it still holds what ``current``
                # was read with (compare-and-swap), and logs ``message`` as is
                current.set_target(oid, message)
            return
        except (pygit2.AlreadyExistsError, pygit2.GitError, OSError):
            time.sleep(random.uniform(0, 0.002 * (1 + attempt)))
    raise ConcurrentUpdate(ref)


# -- metadata lines -------------------------------------------------------------


def meta_values(text: str | None) -> dict[str, Any]:
    """The newest value of each key in a metadata note (None values mean unset)."""
    best: dict[str, tuple[int, str, Any]] = {}
    for line in (text or "").splitlines():
        try:
            item = json.loads(line)
            key, value, stamp, machine = item["k"], item.get("v"), int(item["t"]), str(item["m"])
        except (ValueError, KeyError, TypeError):
            continue
        if key not in best or (stamp, machine) > best[key][:2]:
            best[key] = (stamp, machine, value)
    return {k: v[2] for k, v in best.items() if v[2] is not None}


def meta_line(key: str, value: Any, stamp_ms: int, machine: str) -> str:
    return json.dumps({"k": key, "v": value, "t": stamp_ms, "m": machine}, sort_keys=True)


def last_stamp(text: str | None, machine: str) -> int:
    """The newest stamp ``machine`` wrote into a metadata note (0 if none)."""
    best = 0
    for line in (text or "").splitlines():
        try:
            item = json.loads(line)
            if str(item["m"]) == machine:
                best = max(best, int(item["t"]))
        except (ValueError, KeyError, TypeError):
            continue
    return best


def union(a: str | None, b: str | None) -> str:
    """Union of two notes' lines, sorted and de-duplicated (cat_sort_uniq)."""
    lines = {line for line in (a or "").splitlines() + (b or "").splitlines() if line.strip()}
    return "".join(line + "\n" for line in sorted(lines))


def compact_meta(text: str, limit: int = 20) -> str:
    """Keep only the newest line per key once a note grows past ``limit`` lines."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) <= limit:
        return text
    newest: dict[str, tuple[tuple[int, str], str]] = {}
    for line in lines:
        try:
            item = json.loads(line)
            rank = (int(item["t"]), str(item["m"]))
            key = str(item["k"])
        except (ValueError, KeyError, TypeError):
            continue
        if key not in newest or rank > newest[key][0]:
            newest[key] = (rank, line)
    return "".join(v[1] + "\n" for v in sorted(newest.values()))
