"""Operations as people and scripts read them (`jp op log`, `jp undo`, `jp op restore`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from gitstore import ops

SHORT = 12  # characters of an operation id or a commit id in text


def value(v: str | None) -> str:
    """A ref value in text: a short commit id, the ref a symbolic ref names, or "absent"."""
    text = ops.ref_value(v)
    if text is None:
        return "absent"
    return text if text.startswith("refs/") or len(text) != 40 else text[:SHORT]


def moves_json(moves: Sequence[ops.Move]) -> list[dict[str, Any]]:
    return [{"ref": m.ref, "old": ops.ref_value(m.old), "new": ops.ref_value(m.new)} for m in moves]


SHOWN_MOVES = 5  # refs an undo or a restore lists before it counts the rest


def moves_text(moves: Sequence[ops.Move]) -> list[str]:
    return [f"    {m.ref}: {value(m.old)} -> {value(m.new)}" for m in moves]


def shared_lines(moved: Sequence[ops.Move]) -> list[str]:
    """What an undo or a restore did not take back: a copy shared on a remote
    (`jp conversation share --remote`) whose record here it moved."""
    from gitstore import syncing  # lazy: the sync modules, for an undo only

    out = []
    for m in moved:
        found = syncing.shared_record(m.ref)
        if found is None:
            continue
        remote, cid = found
        if m.new is None:
            out.append(
                f"the copy of {cid} shared on {remote} is still there (undo changes this store "
                f"only): `jp conversation unshare {cid} --remote {remote}` deletes it"
            )
        else:
            out.append(
                f"the record of {cid}'s share on {remote} is back here, but not the copy there "
                f"if it was deleted: `jp conversation share {cid} --remote {remote}` shares it again"
            )
    return out


def moves_brief(moves: Sequence[ops.Move], op_id: str) -> list[str]:
    """``moves_text`` of the first few refs and a count of the rest (`jp remote
    remove` moves every tracking ref of its remote), with where to see them all."""
    if len(moves) <= SHOWN_MOVES + 1:
        return moves_text(moves)
    rest = len(moves) - SHOWN_MOVES
    return [
        f"    {len(moves)} refs moved back, the first {SHOWN_MOVES}:",
        *moves_text(moves[:SHOWN_MOVES]),
        f"    ... and {rest} more (`jp op log` lists every ref of operation "
        f"{op_id[:SHORT]}; `-F json` prints them all)",
    ]


def when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def command(op: ops.Op) -> str:
    """The command line as text that prints (a byte that is not UTF-8 as ``\\xNN``)."""
    return ops.printable_command(op.command)


def headline(op: ops.Op) -> str:
    extra = ""
    if op.undoes:
        extra = f"  (undoes {op.undoes[:SHORT]})"
    elif op.restores:
        extra = f"  (restores {op.restores[:SHORT]})"
    if op.recovered:
        extra += "  (interrupted; recorded by the next command)"
    return f"{op.id[:SHORT]}  {when(op.time)}  {command(op)}{extra}"


def as_json(op: ops.Op) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": op.id,
        "command": command(op),
        "time": utc(op.time),
        "started": utc(op.started) if op.started else None,
        "pid": op.pid,
        "host": op.host,
        "active": op.active,
        "refs": moves_json(op.moves),
        "undoes": op.undoes,
        "restores": op.restores,
        "recovered": op.recovered,
    }
    if op.remotes:
        out["remotes"] = [{"name": r.name, "old": r.old, "new": r.new} for r in op.remotes]
    return out


def remote_lines(op: ops.Op, undone: bool = False) -> list[str]:
    """A line per remote the operation changed (``undone``: as its undo changes it back)."""
    out = []
    for r in reversed(op.remotes) if undone else op.remotes:
        old = (r.old or {}).get("url") if r.old else None
        new = (r.new or {}).get("url") if r.new else None
        if undone:
            old, new = new, old
        out.append(f"    remote {r.name}: {old or 'absent'} -> {new or 'absent'}")
    return out
