"""Checking a store, and mending what is safe to mend (``jp doctor``).

Each check returns findings as data: what is wrong, the command that mends
it, and whether ``mend`` may apply that itself.  A finding of severity
"note" is information (a lock held by a running jp, a store from an older
jp) and does not make a store unhealthy.  The store must be opened with
``repair=False``, so that what the next command would mend silently can be
seen first.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore.fs import flock
from gitstore.git import command, objects, pack, refs
from gitstore.git.refs import packed, packedform, quarantine, transaction
from gitstore.git.refs.transaction import RefUpdate
from gitstore.oplog import log as oplog
from gitstore.oplog import recorder as oprecord
from gitstore.store import format as storeformat

if TYPE_CHECKING:
    from gitstore.store.core import Store

FIX = "jp doctor --fix"
FSCK_LINES = 5  # fsck problems named one by one; the rest are counted


@dataclass(frozen=True)
class Finding:
    check: str  # format, fsck, journal, oplog, lock, quarantine, cache, maintenance
    problem: str  # one line
    fix: str  # the command that mends it
    fixable: bool = False  # ``mend`` applies it
    severity: str = "problem"  # or "note"
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _age(seconds: float) -> str:
    if seconds >= 7200:
        return f"{seconds / 3600:.0f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def _rel(store: Store, path: Path) -> str:
    try:
        return path.relative_to(store.gitdir).as_posix()
    except ValueError:
        return str(path)


def examine(store: Store, fsck: bool = True) -> list[Finding]:
    """Every finding, one check after another."""
    out = check_format(store)
    out += check_journals(store) + check_pending(store) + check_locks(store)
    out += check_packed_refs(store)
    out += check_quarantine(store) + check_cache(store) + check_oplog(store)
    out += check_maintenance(store)
    if fsck:
        out += check_fsck(store)
    return out


def check_format(store: Store) -> list[Finding]:
    if store.format is not None and store.format >= storeformat.FORMAT:
        return []
    return [
        Finding(
            "format",
            "the store's format version is not recorded (a store from an older jp); "
            "the next write records it",
            FIX,
            fixable=True,
            severity="note",
        )
    ]


def check_journals(store: Store) -> list[Finding]:
    out: list[Finding] = []
    folder = store.gitdir / "jp" / "ops"
    for path in sorted(folder.glob("*")) if folder.is_dir() else []:
        if path.suffix not in (".json", ".tmp"):
            continue
        if flock.is_held(path):
            continue  # its writer is at work
        out.append(
            Finding(
                "journal",
                f"an interrupted ref update was not finished ({_rel(store, path)})",
                FIX,
                fixable=True,
                path=str(path),
            )
        )
    return out


def check_pending(store: Store) -> list[Finding]:
    return [
        Finding(
            "oplog",
            f"a killed command's operation is not in the log yet ({_rel(store, path)})",
            FIX,
            fixable=True,
            path=str(path),
        )
        for path in oprecord.abandoned(store.gitdir)
    ]


def ref_locks(gitdir: Path) -> list[Path]:
    """git's lock files: ``HEAD.lock``, ``JP_HEAD.lock``, ``packed-refs.lock``, ``config.lock``
    at the top, and every ``<ref>.lock`` under ``refs/``."""
    top = [p for p in sorted(gitdir.glob("*.lock")) if p.is_file()]
    refs = sorted(p for p in (gitdir / "refs").rglob("*.lock") if p.is_file())
    return top + refs


def check_locks(store: Store) -> list[Finding]:
    out: list[Finding] = []
    for path in ref_locks(store.gitdir):
        age = flock.ref_lock_age(path)
        if age is None:
            continue
        name = _rel(store, path)
        if age < flock.REF_LOCK_STALE:
            out.append(
                Finding("lock", f"{name} is in use ({_age(age)} old)", "wait", severity="note")
            )
            continue
        if not flock.jp_owned(name, store.notes.refs == refs.PROJECT):
            out.append(_git_lock(name, age))
            continue
        out.append(
            Finding(
                "lock",
                f"stale lock {name} ({_age(age)} old) blocks writes of {name[: -len('.lock')]}",
                FIX,
                fixable=True,
                path=str(path),
            )
        )
    for path in sorted(flock.folder(store.gitdir).glob("*.lock")):
        if not flock.is_held(path):
            continue  # a free lock file is no lock: the kernel released it
        who = flock.owner(path)
        by = f"jp process {who.pid} on {who.host}, {_age(time.time() - who.since)}" if who else ""
        out.append(
            Finding(
                "lock",
                f"{_rel(store, path)} is held by {by or 'a running jp'}",
                "wait for that command to finish",
                severity="note",
                path=str(path),
            )
        )
    return out


def check_packed_refs(store: Store) -> list[Finding]:
    """A ``packed-refs`` git cannot read: the refs it held are lost to every command."""
    problem = packed.damage(store.gitdir)
    if problem is None:
        return []
    return [
        Finding(
            "packed-refs",
            f"packed-refs is damaged ({problem}): the refs it holds cannot be read or moved",
            f"{FIX} rebuilds it from its good lines, the loose refs and the reflogs",
            fixable=True,
            path=str(packedform.path(store.gitdir)),
        )
    ]


def _git_lock(name: str, age: float) -> Finding:
    """A lock of git's own in a project's repository: named, never removed by jp."""
    return Finding(
        "lock",
        f"{name} ({_age(age)} old) is git's own lock, not jp's; jp leaves it alone",
        "a git command may hold it (`git commit` holds index.lock while its editor is "
        "open); if no git is running, remove it by hand",
        severity="note",
    )


def check_quarantine(store: Store) -> list[Finding]:
    """Each ref a pull kept aside, with where it came from and why it was refused."""
    if not store.gitdir.is_dir():
        return []
    git = f"git --git-dir={store.gitdir}"
    acks = quarantine.acknowledged(store.gitdir)
    out: list[Finding] = []
    for q in sorted(store.refs.quarantined(), key=lambda q: q.ref):
        acked = quarantine.is_acknowledged(acks, q.remote, q.remote_ref, q.tip)
        out.append(
            Finding(
                "quarantine",
                f"quarantined ref {q.ref} ({q.remote}'s {q.remote_ref}): {q.reason}"
                + (" (acknowledged)" if acked else ""),
                f"inspect it with `{git} log {q.ref}`, drop it with `{git} update-ref -d {q.ref}`"
                " (the next pull keeps it aside again while the remote still holds it)"
                + ("" if acked else "; `jp doctor --ack` accepts it as it is"),
                severity="note" if acked else "problem",
                path=q.ref,
            )
        )
    return out


def check_cache(store: Store) -> list[Finding]:
    path = store.local.cache_file
    if not path.exists():
        return []
    problem = ""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute("PRAGMA quick_check").fetchone()
            problem = "" if row and row[0] == "ok" else str(row[0] if row else "no answer")
        finally:
            db.close()
    except sqlite3.Error as exc:
        problem = str(exc)
    if not problem:
        return []
    return [
        Finding(
            "cache",
            f"the cache {_rel(store, path)} is damaged ({problem}); it holds nothing "
            "that git does not",
            f"{FIX} (rebuilds it)",
            fixable=True,
            path=str(path),
        )
    ]


def check_oplog(store: Store) -> list[Finding]:
    tip = store.refs.target(oplog.REF)
    if tip is None or any(True for _ in oplog.entries(store.repo)):
        return []
    return [
        Finding(
            "oplog",
            f"{oplog.REF} does not hold an operation log",
            f"`git --git-dir={store.gitdir} update-ref -d {oplog.REF}` starts a new one",
        )
    ]


def check_fsck(store: Store) -> list[Finding]:
    git = shutil.which("git")
    if git is None:
        return [
            Finding("fsck", "git is not installed: fsck skipped", "install git", severity="note")
        ]
    proc = command.run(store.gitdir, ["fsck", "--no-dangling", "--no-progress"], check=False)
    if proc.returncode == 0:
        return []
    said = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    lines = [
        line.strip()
        for line in said.splitlines()
        if line.strip() and not line.startswith(("notice:", "Checking"))
    ]
    lines = lines or [f"git fsck exited with {proc.returncode}"]
    shown = lines[:FSCK_LINES]
    if len(lines) > FSCK_LINES:
        shown.append(f"and {len(lines) - FSCK_LINES} more problems")
    fix = f"see `git --git-dir={store.gitdir} fsck`; `jp op log` and `jp op restore` recover refs"
    return [Finding("fsck", f"git fsck: {line}", fix) for line in shown]


def check_maintenance(store: Store) -> list[Finding]:
    """Past git's own limits (``gc.autoPackLimit`` packs, ``gc.auto`` loose objects) with
    no git gc at work: every read looks through more files than it needs to."""
    # lazy: only doctor and the writes that follow it count packs
    from gitstore.store import maintenance

    if not maintenance.due(store.place) or (store.gitdir / "gc.pid").exists():
        return []
    packs = pack.count(store.gitdir)
    loose = objects.loose_estimate(store.gitdir)
    return [
        Finding(
            "maintenance",
            f"git's maintenance is due ({packs} packs, about {loose} loose objects): "
            "reads look through more files than they need to",
            FIX,
            fixable=True,
            severity="note",
        )
    ]


# -- mending ---------------------------------------------------------------------------


def mend(store: Store, findings: list[Finding]) -> list[Finding]:
    """Apply every fixable finding's fix; returns the ones applied."""
    done: list[Finding] = []
    kinds = {f.check for f in findings if f.fixable}
    for f in findings:
        if f.fixable and f.check == "lock" and f.path:
            age = flock.ref_lock_age(Path(f.path))
            if age is not None and age >= flock.REF_LOCK_STALE:
                Path(f.path).unlink(missing_ok=True)
                done.append(f)
    if "packed-refs" in kinds:  # first: every other repair reads refs
        done.append(_rebuild_packed(store))
    if "journal" in kinds:
        transaction.repair(store.place)
        done += [f for f in findings if f.check == "journal"]
    if "oplog" in kinds:
        store.repair(strict=True)
        done += [
            f
            for f in findings
            if f.check == "oplog" and f.fixable and not (f.path and Path(f.path).exists())
        ]
    if "format" in kinds:
        storeformat.write(store.repo)
        store.format = storeformat.FORMAT
        done += [f for f in findings if f.check == "format"]
    if "cache" in kinds:
        rebuild_cache(store)
        done += [f for f in findings if f.check == "cache"]
    if "maintenance" in kinds:
        # git gc (its default grace for unreachable objects), waited for: the user asked
        store.local.maintain(force=True, wait=True)
        done += [f for f in findings if f.check == "maintenance"]
    return done


def _rebuild_packed(store: Store) -> Finding:
    """Rebuild ``packed-refs``: the refs it brings back are the command's operation
    (`jp undo` takes them away again); the log's own ref is no state to undo."""

    def record(updates: Sequence[RefUpdate]) -> AbstractContextManager[None]:
        return store.ops.moving([u for u in updates if u.name != oplog.REF])

    rebuilt = packed.rebuild(store.place, record)
    return Finding(
        "packed-refs",
        f"packed-refs rebuilt: {rebuilt.dropped} bad line(s) dropped, "
        f"{len(rebuilt.restored)} ref(s) restored from their reflogs",
        ", ".join(rebuilt.restored) or "nothing else was lost",
    )


def rebuild_cache(store: Store) -> None:
    """Drop the cache and read every conversation into a new one."""
    store.local.drop_cache()
    store.log.prefetch([loc.tip for loc in store.refs.list(None)])
