"""Which conversation a command means: ids and JP's keywords.

`active`/`.` (the default), `recent`/`r` (last activated here), `newest`/`n`
(newest id), `pinned`/`p` (most recently pinned), `archived`/`a` (most
recently archived), `@N` (the N-th most recently active live conversation:
`@1` has the latest event; ids hold no `@`, so a handle never clashes with a
prefix).  Anything else must be a conversation id or a unique
prefix of one, with or without ``jp-c``, or an imported session's handle (the
start of its hex suffix, `porcelain/domain/idprefix.py`); it is checked before
it is used in a ref name.
"""

from __future__ import annotations

import re

from gitstore import Located, Store, activity, errors
from gitstore import ids as store_ids
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

HANDLE = re.compile(r"@[0-9]{1,6}")

NO_ACTIVE_HINT = (
    "start one with `jp q --new TEXT`, or pick one: `jp conversation use ID` "
    "(list them with `jp conversation ls`)"
)


def resolve(store: Store, target: str | None, *, archived_ok: bool = True) -> Located:
    """The conversation ``target`` names (None: the active one)."""
    keyword = KEYWORDS.get(target or "active") if target is None or target in KEYWORDS else None
    if keyword is not None:
        cid = _keyword(store, keyword)
    elif target is not None and HANDLE.fullmatch(target):
        cid = by_handle(store, int(target[1:]))
    else:
        cid = _by_id(store, target or "")
    found = store.refs.require(cid)
    if found.archived and not archived_ok:
        raise UserError(
            f"conversation {cid} is archived",
            f"restore it first: `jp conversation unarchive {cid}`",
        )
    return found


def _by_id(store: Store, text: str) -> str:
    """The id ``text`` names: the id itself, or a unique prefix of one (``jp-c`` optional)."""
    if store_ids.is_valid(text) and store.refs.exists(text):
        return text
    wanted = idprefix.normalize(text)
    if wanted is None and not idprefix.is_handle(text):
        return store_ids.check(text)  # not an id, no prefix of one and no handle: says so
    try:
        found = idprefix.pick(text, [loc.cid for loc in store.refs.list(archived=None)])
    except idprefix.Ambiguous as exc:
        raise UserError(
            f"{wanted or text} is ambiguous: it could be "
            f"{idprefix.describe_candidates(exc.candidates)}",
            "type more of the id (`jp conversation ls` shows each one's shortest unique "
            "prefix, and an imported session's handle)",
        ) from None
    if found is None and wanted is None:
        raise UserError(
            f"no conversation has the handle {text}",
            "`jp conversation ls --all` lists every conversation with its handle",
        )
    return found if found is not None else store_ids.check(wanted or text)


def active_id(store: Store) -> str | None:
    cid = store.refs.active()
    return cid if cid and store.refs.exists(cid) else None


def _keyword(store: Store, keyword: str) -> str:
    if keyword == "active":
        cid = store.refs.active()
        if cid is None:
            raise UserError("no active conversation", NO_ACTIVE_HINT)
        if not store.refs.exists(cid):
            raise UserError(f"the active conversation {cid} no longer exists", NO_ACTIVE_HINT)
        return cid
    if keyword == "archived":
        return _latest(store, archived=True, key="archived_at")
    if keyword == "pinned":
        return _latest(store, archived=False, key="pinned_at")
    live = [loc.cid for loc in store.refs.list(archived=False)]
    if not live:
        raise UserError("there are no conversations", NO_ACTIVE_HINT)
    if keyword == "newest":
        return max(live, key=lambda c: (store_ids.created_at(c), c))
    seen = activity.activations(store)
    return max(live, key=lambda c: (seen.get(c, 0.0), store_ids.created_at(c), c))


def _latest(store: Store, *, archived: bool, key: str) -> str:
    candidates = []
    for loc in store.refs.list(archived=archived):
        meta = store.notes.meta(loc.cid)
        if key in meta or archived:
            candidates.append((str(meta.get(key, "")), loc.cid))
    if not candidates:
        what = "archived" if archived else "pinned"
        raise UserError(f"there are no {what} conversations")
    return max(candidates)[1]


def recent_ids(store: Store) -> list[str]:
    """Live conversations, the most recently active (latest event) first: ``@1``, ``@2``..."""
    # lazy: the summaries (cached) load only when a handle is used
    from porcelain.app.describe import summaries

    live = list(store.refs.list(archived=False))
    sums = summaries(store, live)
    return [
        loc.cid
        for loc in sorted(live, key=lambda loc: (sums[loc.tip]["last_ts"], loc.cid), reverse=True)
    ]


def by_handle(store: Store, n: int) -> str:
    ids = recent_ids(store)
    if not ids:
        raise UserError("there are no conversations", NO_ACTIVE_HINT)
    if not 1 <= n <= len(ids):
        raise UserError(
            f"@{n}: there {'is' if len(ids) == 1 else 'are'} {len(ids)} live "
            f"conversation{'' if len(ids) == 1 else 's'} (@1 to @{len(ids)})",
            "`jp conversation ls` lists them, the most recently active last",
        )
    return ids[n - 1]


def search_titles(store: Store, text: str) -> list[tuple[str, str]]:
    """(id, title) of the conversations whose title (or, untitled, first request)
    holds ``text``, case and spacing aside; live ones first, most recent first."""
    # lazy: the listing loads only for a title search
    from porcelain.app.describe import listing

    wanted = " ".join(text.split()).casefold()
    if not wanted:
        return []
    rows = listing(store, list(store.refs.list(archived=None)), None)
    found = []
    for row in sorted(
        rows, key=lambda r: (not r["archived"], r["last_event_at"] or ""), reverse=True
    ):
        title = str(row["title"] or row["preview"] or "")
        if wanted in " ".join(title.split()).casefold():
            found.append((str(row["id"]), title))
    return found


def resolve_or_search(store: Store, target: str) -> Located:
    """``resolve``, and when ``target`` names no conversation that way, the one
    conversation whose title holds it (several: an error naming them)."""
    try:
        return resolve(store, target)
    except (UserError, errors.InvalidId, errors.ConversationNotFound) as first:
        if target in KEYWORDS or HANDLE.fullmatch(target):
            raise
        found = search_titles(store, target)
        if not found:
            raise first from None
        if len(found) > 1:
            shown = "; ".join(f"{cid} ({title[:40]})" for cid, title in found[:5])
            more = f" and {len(found) - 5} more" if len(found) > 5 else ""
            raise UserError(
                f"{len(found)} conversations have {target!r} in their title: {shown}{more}",
                "type more of the title, or use an id",
            ) from None
        return store.refs.require(found[0][0])
