"""A conversation's recorded configuration as this machine's user accepted it.

A ``config_delta`` travels with its conversation, so a pull or an import
brings deltas anyone could have written.  The trust rule (``config/trust.py``)
lets such a delta choose a model only among the providers the user's own
configuration enables; a delta the user's own command wrote here, or one jp
already named to the user, is accepted (``gitstore``'s ``accepted_commits``,
local state that never syncs) and skips that check.  ``foreign_model`` finds
a model chosen by a delta not yet accepted, which the query names once before
it uses it (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from gitstore import ChainView, Conversation, Store, activity
from porcelain.app.lifecycle import recorded_deltas
from porcelain.config import Config, Recorded

MODEL_ID_PATH = ("assistant", "model", "id")


def conversation_deltas(store: Store, conv: Conversation) -> list[Recorded]:
    """``conv``'s recorded deltas, those the user accepted on this machine marked own."""
    return recorded_deltas(conv.cid, conv.events, conv.commits, activity.accepted_commits(store))


def chain_deltas(store: Store, cid: str, view: ChainView) -> list[Recorded]:
    """As ``conversation_deltas``, for a chain read as a view (only its internal events)."""
    internal = view.facts.internal_events()
    commits = [view.commit(pos) for pos, _ in internal]
    return recorded_deltas(cid, [e for _, e in internal], commits, activity.accepted_commits(store))


def own(delta: dict[str, object], source: str) -> Recorded:
    """What this command's own flags record: the user's own choice."""
    return Recorded(delta, source, own=True)


def foreign_model(config: Config, recorded: Sequence[Recorded]) -> Recorded | None:
    """The delta not yet accepted that chose ``config``'s model, if one did."""
    origin = config.origin(MODEL_ID_PATH)
    for item in recorded:
        if item.source == origin and not item.own and item.commit:
            return item
    return None


def naming(cid: str, model_id: str, chosen: Recorded) -> str:
    """The one line that names a model chosen elsewhere, before it is used."""
    return (
        f"note: conversation {cid} uses the model {model_id}, chosen by configuration "
        f"it recorded elsewhere (commit {chosen.commit[:12]}, from a pull or an import); "
        "this is said once (pass -m to choose another)"
    )


def accept(store: Store, commits: Sequence[str]) -> None:
    """Remember ``commits`` as accepted by this machine's user."""
    activity.accept_commits(store, commits)
