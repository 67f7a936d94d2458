"""The conversation that was active before the current one (`use -`)."""

from __future__ import annotations

from collections.abc import Mapping

from gitstore import Store, activity
from porcelain.errors import UserError


def latest_other(seen: Mapping[str, float], exists: set[str], current: str | None) -> str | None:
    """The most recently activated conversation that still exists and is not ``current``."""
    candidates = [(t, c) for c, t in seen.items() if c != current and c in exists]
    return max(candidates)[1] if candidates else None


def previous_id(store: Store, current: str | None) -> str:
    """The id `use -` switches to; an error when there is none."""
    exists = {loc.cid for loc in store.refs.list(archived=None)}
    found = latest_other(activity.activations(store), exists, current)
    if found is None:
        raise UserError(
            "no previous conversation on this machine",
            "`jp conversation ls` lists them; `jp conversation use ID` switches",
        )
    return found
