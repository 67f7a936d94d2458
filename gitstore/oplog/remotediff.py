"""What undo and restore may write back to a remote's settings (pure).

An operation records a remote's settings before and after it (``url``, the
``fetch`` and ``push`` refspecs).  Taking that change back must not undo
what someone else did since: a URL set with ``git remote set-url``, a
refspec the user added.  So, as for refs, it is a compare-and-swap: each
key the operation changed must still hold what the operation left it at
(``conflicts``); and what is written is only the operation's own change
taken back (``reverted``): the refspecs it added go, the ones it removed
come back, the URL returns only if the operation set it, and every other
value stays as it is now.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KEYS = ("url", "fetch", "push")
Snapshot = Mapping[str, Any] | None


def _url(snap: Snapshot) -> str | None:
    value = (snap or {}).get("url")
    return str(value) if value else None


def _specs(snap: Snapshot, key: str) -> list[str]:
    return [str(s) for s in (snap or {}).get(key) or []]


def _value(snap: Snapshot, key: str) -> str | list[str] | None:
    return _url(snap) if key == "url" else _specs(snap, key)


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """The keys whose values the change from ``before`` to ``after`` altered."""
    return [k for k in KEYS if _value(before, k) != _value(after, k)]


def shown(snap: Snapshot, key: str) -> str | None:
    """A key's value in a message (None: absent)."""
    value = _value(snap, key)
    if isinstance(value, list):
        return " ".join(value) if value else None
    return value


def conflicts(before: Snapshot, after: Snapshot, current: Snapshot) -> list[str]:
    """The keys the change altered that no longer hold what it left."""
    return [k for k in changed(before, after) if _value(current, k) != _value(after, k)]


def reverted(
    before: Snapshot, after: Snapshot, current: Snapshot, force: bool = False
) -> dict[str, Any] | None:
    """``current`` with the change from ``before`` to ``after`` taken back.

    The URL goes back only if the change set it and it still holds that value
    (or ``force``); refspecs the change added are dropped and the ones it
    removed added back, leaving every other refspec where it is.  None: the
    remote has no URL and no refspecs left.
    """
    url = _url(current)
    if "url" in changed(before, after) and (force or url == _url(after)):
        url = _url(before)
    out: dict[str, Any] = {"url": url or ""}
    for key in ("fetch", "push"):
        old, new = _specs(before, key), _specs(after, key)
        added = [s for s in new if s not in old]
        removed = [s for s in old if s not in new]
        kept = [s for s in _specs(current, key) if s not in added]
        out[key] = kept + [s for s in removed if s not in kept]
    if not url and not out["fetch"] and not out["push"]:
        return None
    return out
