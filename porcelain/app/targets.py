"""Which conversation a command means: ids and JP's keywords.

`active`/`.` (the default), `recent`/`r` (last activated here), `newest`/`n`
(newest id), `pinned`/`p` (most recently pinned), `archived`/`a` (most
recently archived).  Anything else must be a conversation id or a unique
prefix of one, with or without ``jp-c`` (`porcelain/domain/idprefix.py`); it is
checked before it is used in a ref name.
"""

from __future__ import annotations

from gitstore import Located, Store, activations, check_id, created_at, is_valid_id
from porcelain.domain import idprefix
from porcelain.errors import UserError

KEYWORDS = {
    ".": "active",
    "active": "active",
    "r": "recent",
    "recent": "recent",
    "n": "newest",
    "newest": "newest",
    "p": "pinned",
    "pinned": "pinned",
    "a": "archived",
    "archived": "archived",
}

NO_ACTIVE_HINT = (
    "start one with `jp q --new TEXT`, or pick one: `jp conversation use ID` "
    "(list them with `jp conversation ls`)"
)


def resolve(store: Store, target: str | None, *, archived_ok: bool = True) -> Located:
    """The conversation ``target`` names (None: the active one)."""
    keyword = KEYWORDS.get(target or "active") if target is None or target in KEYWORDS else None
    if keyword is not None:
        cid = _keyword(store, keyword)
    else:
        cid = _by_id(store, target or "")
    found = store.require(cid)
    if found.archived and not archived_ok:
        raise UserError(
            f"conversation {cid} is archived",
            f"restore it first: `jp conversation unarchive {cid}`",
        )
    return found


def _by_id(store: Store, text: str) -> str:
    """The id ``text`` names: the id itself, or a unique prefix of one (``jp-c`` optional)."""
    if is_valid_id(text) and store.exists(text):
        return text
    wanted = idprefix.normalize(text)
    if wanted is None:
        return check_id(text)  # not an id and no prefix of one: says so
    try:
        found = idprefix.pick(wanted, [loc.cid for loc in store.refs(archived=None)])
    except idprefix.Ambiguous as exc:
        raise UserError(
            f"{wanted} is ambiguous: it could be {idprefix.describe_candidates(exc.candidates)}",
            "type more of the id (`jp conversation ls` shows each one's shortest unique prefix)",
        ) from None
    return found if found is not None else check_id(wanted)


def active_id(store: Store) -> str | None:
    cid = store.active()
    return cid if cid and store.exists(cid) else None


def _keyword(store: Store, keyword: str) -> str:
    if keyword == "active":
        cid = store.active()
        if cid is None:
            raise UserError("no active conversation", NO_ACTIVE_HINT)
        if not store.exists(cid):
            raise UserError(f"the active conversation {cid} no longer exists", NO_ACTIVE_HINT)
        return cid
    if keyword == "archived":
        return _latest(store, archived=True, key="archived_at")
    if keyword == "pinned":
        return _latest(store, archived=False, key="pinned_at")
    live = [loc.cid for loc in store.refs(archived=False)]
    if not live:
        raise UserError("there are no conversations", NO_ACTIVE_HINT)
    if keyword == "newest":
        return max(live, key=lambda c: (created_at(c), c))
    seen = activations(store)
    return max(live, key=lambda c: (seen.get(c, 0.0), created_at(c), c))


def _latest(store: Store, *, archived: bool, key: str) -> str:
    candidates = []
    for loc in store.refs(archived=archived):
        meta = store.meta(loc.cid)
        if key in meta or archived:
            candidates.append((str(meta.get(key, "")), loc.cid))
    if not candidates:
        what = "archived" if archived else "pinned"
        raise UserError(f"there are no {what} conversations")
    return max(candidates)[1]
