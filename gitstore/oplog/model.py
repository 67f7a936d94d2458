"""Operations of the operation log as data (``log.py`` stores them in git; what undo
and restore do with them is ``gitstore/undoing.py``).

A ref's value is a commit id, ``symbolic:<refname>`` for a symbolic ref
(``JP_HEAD``) or None for an absent ref, as in ``transaction.RefUpdate``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

SYMBOLIC = "symbolic:"
VERSION = 1


class Move(NamedTuple):
    """One ref an operation moved: from ``old`` to ``new`` (None = absent)."""

    ref: str
    old: str | None
    new: str | None


class RemoteChange(NamedTuple):
    """A remote's configuration before and after (None = no such remote)."""

    name: str
    old: Mapping[str, Any] | None
    new: Mapping[str, Any] | None


class Op(NamedTuple):
    """One command's changes to the store."""

    id: str
    command: str
    time: float  # when it was recorded (seconds since the epoch)
    started: float = 0.0
    pid: int = 0
    host: str = ""
    active: str | None = None  # the active conversation once it was done
    moves: Sequence[Move] = ()
    remotes: Sequence[RemoteChange] = ()
    undoes: str | None = None  # the operation this one undid (``jp undo``)
    restores: str | None = None  # the operation whose state it restored
    recovered: bool = False  # completed from the record of a command that was killed
    since: float = 0.0  # when the oldest operation still in the log was recorded

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": VERSION,
            "id": self.id,
            "command": self.command,
            "time": self.time,
            "started": self.started,
            "pid": self.pid,
            "host": self.host,
            "active": self.active,
            "refs": [{"ref": m.ref, "old": m.old, "new": m.new} for m in self.moves],
            "since": self.since,
        }
        if self.remotes:
            out["remotes"] = [
                {
                    "name": r.name,
                    "old": dict(r.old) if r.old else None,
                    "new": dict(r.new) if r.new else None,
                }
                for r in self.remotes
            ]
        for key in ("undoes", "restores"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.recovered:
            out["recovered"] = True
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Op:
        moves = [
            Move(str(m["ref"]), _value(m.get("old")), _value(m.get("new")))
            for m in data.get("refs") or []
        ]
        remotes = [
            RemoteChange(str(r["name"]), r.get("old") or None, r.get("new") or None)
            for r in data.get("remotes") or []
        ]
        return cls(
            id=str(data["id"]),
            command=str(data.get("command") or ""),
            time=float(data.get("time") or 0.0),
            started=float(data.get("started") or 0.0),
            pid=int(data.get("pid") or 0),
            host=str(data.get("host") or ""),
            active=_value(data.get("active")),
            moves=moves,
            remotes=remotes,
            undoes=_value(data.get("undoes")),
            restores=_value(data.get("restores")),
            recovered=bool(data.get("recovered")),
            since=float(data.get("since") or 0.0),
        )


def _value(v: Any) -> str | None:
    return None if v is None else str(v)


def coalesce(moves: Iterable[Move]) -> list[Move]:
    """One move per ref: its first old value and its last new one, in the order
    the refs were first moved; a ref that ended where it started is left out."""
    first: dict[str, Move] = {}
    last: dict[str, str | None] = {}
    for move in moves:
        first.setdefault(move.ref, move)
        last[move.ref] = move.new
    out = [Move(ref, m.old, last[ref]) for ref, m in first.items()]
    return [m for m in out if m.old != m.new]


def printable(text: str) -> str:
    """``text`` that encodes as UTF-8: a byte that is not UTF-8 (a surrogate escape of
    a command line) as ``\\xNN``.  The log keeps the command line exact (its JSON
    escapes such bytes); this is for a commit message and the terminal."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        escaped = text.encode("utf-8", "backslashreplace").decode("utf-8")
        return re.sub(r"\\udc([89a-f][0-9a-f])", r"\\x\1", escaped)


def shown(value: str | None) -> str | None:
    """A ref value for people and JSON: a commit id, the ref a symbolic ref names, or None."""
    if value is not None and value.startswith(SYMBOLIC):
        return value[len(SYMBOLIC) :]
    return value
