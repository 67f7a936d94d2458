"""Where a conversation came from, as `show` says it: a fork's parent, and the
conversation a pull moved this copy away from (remote, commit, when)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gitstore import ids

if TYPE_CHECKING:
    from gitstore import Store, syncing


def origin_rows(info: dict[str, Any]) -> list[tuple[str, str]]:
    """``Fork of`` and ``Diverged`` rows of `show` (none for an original)."""
    rows: list[tuple[str, str]] = []
    if info.get("forked_from") and not info.get("source_id"):
        point = info.get("fork_commit")
        rows.append(("Fork of", info["forked_from"] + (f" at {point[:12]}" if point else "")))
    if info.get("diverged_from"):
        rows.append(
            ("Diverged", "from " + divergence_text(info["diverged_from"], info.get("divergence")))
        )
    origin = info.get("imported_from")
    if isinstance(origin, dict) and origin.get("tool"):
        agent = f", subagent {origin['agent']}" if origin.get("agent") else ""
        branch = origin.get("branch")
        if isinstance(branch, dict):
            agent += f", rewind branch from record {branch.get('record')} of {branch.get('of')}"
        rows.append(("Imported", f"{origin['tool']} session {origin.get('session')}{agent}"))
        rows.append(("From file", str(origin.get("path"))))
        if origin.get("tool_branch_of"):
            rows.append(
                (
                    "Tool branch",
                    f"{origin['tool']}'s own line: it went on from {origin['tool_branch_of']} "
                    "before the jp turns there; re-imports of the file follow this one",
                )
            )
    return rows


def divergence_text(cid: str, divergence: dict[str, Any] | None) -> str:
    """``jp-c1 (continued on origin; the copies part after 1a2b3c4d5e6f, 2026-...)``."""
    facts = divergence or {}
    parts = []
    if facts.get("reason") == "collision":
        where = f" on {facts['remote']}" if facts.get("remote") else ""
        parts.append(f"another conversation has that id{where}")
    elif facts.get("remote"):
        parts.append(f"continued on {facts['remote']}")
    if facts.get("commit"):
        parts.append(f"shared history up to {str(facts['commit'])[:12]}")
    if facts.get("at"):
        parts.append(f"moved here {facts['at']}")
    return cid + (f" ({'; '.join(parts)})" if parts else "")


def continuations(store: Store, outcomes: Sequence[syncing.Outcome]) -> dict[str, str]:
    """Conversations a pull brought in that continue another one (a divergence on
    the machine that pushed them): new id -> the id they diverged from."""
    created = [
        o
        for o in outcomes
        if o.direction == "pull"
        and o.kind == "conversation"
        and o.action == "created"
        and ids.is_valid(o.id)
    ]
    # what the pull knew already (the first pull's notes, in hand), else the notes read
    found: dict[str, Any] = {o.id: o.continues for o in created if o.continues is not None}
    unknown = [o.id for o in created if o.continues is None]
    for cid, values in store.notes.metas(unknown, keys=("diverged_from",)).items():
        found[cid] = values.get("diverged_from")
    return {
        cid: parent
        for cid, parent in found.items()
        if isinstance(parent, str) and ids.is_valid(parent)
    }
