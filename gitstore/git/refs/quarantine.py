"""Refs a pull refused but kept aside, so that they can be looked at.

A remote ref that points at a commit whose chain fails validation (an
``event.json`` that is not an event, a tree with other files, a merge
commit...) is not integrated; its tip is kept under
``refs/jp/quarantine/<remote>/<rest of the ref name>``, for instance
``refs/jp/quarantine/origin/conversations/jp-c2``, so that
``git log refs/jp/quarantine/origin/conversations/jp-c2`` shows what arrived.
The reason is recorded beside it, in ``<git dir>/jp/quarantine/<remote>.json``
(with what was refused outright, so that an unchanged ref is not checked again).

Quarantined refs are never pushed (push refspecs cover only conversations,
archive and notes), never listed as conversations, and never read by
``ls``/``show``/``q``.  Each pull from a remote replaces that remote's set, so
a ref fixed or deleted on the remote leaves quarantine at the next pull.
What is refused outright (a ref at a blob or a tree, a name jp cannot hold,
an event over the size limit, objects git's own checks reject) is not kept.

``listing`` is what ``jp doctor`` reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gitstore.fs import atomic
from gitstore.fs.place import Place
from gitstore.git.refs.transaction import RefUpdate
from gitstore.git.refs.update import update_refs

ROOT = "refs/jp/quarantine/"
UNKNOWN = "(no reason recorded)"


@dataclass(frozen=True)
class Quarantined:
    """One ref kept aside: where it is, where it came from, and why."""

    ref: str  # refs/jp/quarantine/origin/conversations/jp-c2
    remote: str  # origin
    remote_ref: str  # refs/conversations/jp-c2, as the remote names it
    tip: str
    reason: str


def quarantine_ref(remote: str, remote_ref: str) -> str:
    """``refs/conversations/jp-c2`` from ``origin`` -> ``refs/jp/quarantine/origin/conversations/jp-c2``."""
    rest = remote_ref[len("refs/") :] if remote_ref.startswith("refs/") else remote_ref
    return f"{ROOT}{remote}/{rest}"


@dataclass(frozen=True)
class Entry:
    """What a pull refused from a remote ref: the tip it saw, why, and whether it was kept."""

    tip: str
    reason: str
    kept: bool
    limit: int = 0  # the size limit it was checked against
    stage: str = "check"  # "fetch": git refused its objects as they arrived


def prefix(remote: str) -> str:
    return f"{ROOT}{remote}/"


def forget(gitdir: Path, remote: str) -> None:
    """Drop the recorded reasons of ``remote`` (its remote is gone)."""
    _reasons_path(gitdir, remote).unlink(missing_ok=True)


def _reasons_path(gitdir: Path, remote: str) -> Path:
    return gitdir / "jp" / "quarantine" / f"{remote}.json"


def recorded(gitdir: Path, remote: str) -> dict[str, Entry]:
    """What the last pull from ``remote`` refused (remote ref -> entry)."""
    data = atomic.read_json(_reasons_path(gitdir, remote))
    out: dict[str, Entry] = {}
    for ref, item in data.items():
        if isinstance(item, dict) and isinstance(item.get("tip"), str):
            limit = item["limit"] if isinstance(item.get("limit"), int) else 0
            reason = str(item.get("reason") or UNKNOWN)
            stage = "fetch" if item.get("stage") == "fetch" else "check"
            out[ref] = Entry(item["tip"], reason, bool(item.get("kept")), limit, stage)
    return out


def listing(refs: Mapping[str, str], gitdir: Path) -> list[Quarantined]:
    """The quarantined refs among ``refs`` (name -> tip, every ref under ``ROOT``)."""
    out: list[Quarantined] = []
    reasons: dict[str, dict[str, Entry]] = {}
    for name, tip in sorted(refs.items()):
        if not name.startswith(ROOT):
            continue
        remote, _, rest = name[len(ROOT) :].partition("/")
        if not rest:
            continue
        if remote not in reasons:
            reasons[remote] = recorded(gitdir, remote)
        remote_ref = "refs/" + rest
        noted = reasons[remote].get(remote_ref)
        reason = noted.reason if noted is not None and noted.tip == tip else UNKNOWN
        out.append(Quarantined(name, remote, remote_ref, tip, reason))
    return out


def replace(
    place: Place,
    remote: str,
    existing: Mapping[str, str],
    refused: Mapping[str, Entry],
) -> None:
    """Record what this pull from ``remote`` refused, and make the remote's quarantine
    exactly the refused refs marked ``kept``.

    ``existing``: the refs now under ``refs/jp/quarantine/<remote>/`` (name -> tip).
    The caller holds the sync lock of ``remote``: nothing else writes these.  The
    refs move together through ``update_refs`` from the values of ``existing``
    (``ConcurrentUpdate`` and nothing moved if one is not there any more).
    """
    gitdir = place.gitdir
    keep = {quarantine_ref(remote, ref): e.tip for ref, e in refused.items() if e.kept}
    updates = [RefUpdate(name, tip, None) for name, tip in existing.items() if name not in keep]
    updates += [
        RefUpdate(name, existing.get(name), tip)
        for name, tip in keep.items()
        if existing.get(name) != tip
    ]
    update_refs(place, updates, f"jp pull {remote}: refused")
    path = _reasons_path(gitdir, remote)
    if not refused and not path.exists():
        return
    data = {
        ref: {"tip": e.tip, "reason": e.reason, "kept": e.kept, "limit": e.limit, "stage": e.stage}
        for ref, e in refused.items()
    }
    atomic.write_json(path, data, pretty=True)


# -- refusals the user acknowledged ------------------------------------------------------


def _acks_path(gitdir: Path) -> Path:
    return gitdir / "jp" / "acknowledged.json"


def acknowledged(gitdir: Path) -> dict[str, dict[str, str]]:
    """The refusals the user acknowledged (``jp doctor --ack``): remote -> ref -> tip."""
    data = atomic.read_json(_acks_path(gitdir))
    out: dict[str, dict[str, str]] = {}
    for remote, refs in data.items():
        if isinstance(refs, dict):
            out[str(remote)] = {str(r): t for r, t in refs.items() if isinstance(t, str)}
    return out


def is_acknowledged(acks: Mapping[str, Mapping[str, str]], remote: str, ref: str, tip: str) -> bool:
    """Whether the refusal of ``ref`` at ``tip`` was acknowledged (a new tip is not)."""
    return bool(tip) and acks.get(remote, {}).get(ref) == tip


def acknowledge(gitdir: Path) -> list[tuple[str, str, Entry]]:
    """Acknowledge every refusal the last pull from each remote recorded: while the
    remote keeps such a ref at that tip, a sync no longer fails because of it.
    Replaces the earlier acknowledgements; returns the refusals acknowledged."""
    folder = gitdir / "jp" / "quarantine"
    acks: dict[str, dict[str, str]] = {}
    out: list[tuple[str, str, Entry]] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        remote = path.name[: -len(".json")]
        for ref, entry in sorted(recorded(gitdir, remote).items()):
            acks.setdefault(remote, {})[ref] = entry.tip
            out.append((remote, ref, entry))
    target = _acks_path(gitdir)
    if not acks:
        target.unlink(missing_ok=True)
        return out
    atomic.write_json(target, acks, pretty=True)
    return out
