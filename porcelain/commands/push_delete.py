"""`jp push --delete ID`: delete a conversation on a remote, and here.

`jp conversation rm` deletes only this store's copy (a remote that has it
keeps it, and the next pull brings it back).  This deletes the remote's copy
too, after a confirmation, and only if it is still the copy just fetched.
This store's copy goes in the same command, as an operation: `jp undo` brings
it back here, and a `jp push` after that sends it to the remote again.  Other
machines keep their copies: nothing a remote sends deletes a local
conversation (docs/sync.md, "Deleting").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstore import errors, ids, syncing
from porcelain.app.targets import active_id, resolve
from porcelain.commands.context import App
from porcelain.errors import Declined, UserError
from porcelain.render.output import untrusted_field

if TYPE_CHECKING:
    from gitstore import syncing


def conversation_id(app: App, target: str) -> str:
    """The conversation ``target`` names here, else ``target`` as a whole id (one
    deleted here already may still be on the remote)."""
    store = app.store()
    try:
        return resolve(store, target).cid
    except (UserError, errors.ConversationNotFound):  # deleted here (`rm`): the whole id still names it
        try:
            return ids.check(target.strip() if target.startswith("jp-c") else f"jp-c{target}")
        except errors.InvalidId:
            raise UserError(
                f"{untrusted_field(target)} names no conversation here and is not a whole id",
                "give the conversation's whole id (`jp conversation ls --all` lists them)",
            ) from None


def delete(app: App, syncer: syncing.Syncer, target: str, yes: bool) -> None:
    store = app.store()
    cid = conversation_id(app, target)
    remote = syncer.remote
    with syncer.exclusive():
        if not syncing.remote_has(syncer, cid):
            raise UserError(
                f"the remote {remote} has no conversation {cid}",
                "`jp conversation rm ID` deletes a conversation of this store only",
            )
        here = store.refs.locate(cid)
        what = f"{cid} from the remote {remote}" + (" and from this store" if here else "")
        question = f"Delete {what}? (other machines keep their copies)"
        if not app.confirm(question, yes):
            raise Declined("nothing was deleted")
        done = syncing.delete_on_remote(syncer.sending(), cid)
        if done.refused:
            ref, why = done.refused[0]
            raise UserError(
                f"the remote {remote} refused to delete {ref}: {why}",
                "it may have changed since it was fetched: `jp pull`, then try again",
            )
        if here is not None:
            active = active_id(store)
            store.refs.delete(cid, f"jp push --delete {cid}")
            if cid == active:
                store.refs.set_active(None)
    _report(app, cid, remote, here is not None)


def _report(app: App, cid: str, remote: str, here: bool) -> None:
    if app.output.emit_json({"deleted": cid, "remote": remote, "here": here}):
        return
    app.output.line(f"Deleted {cid} from {remote}" + (" and from this store." if here else "."))
    if here:
        app.output.note(
            f"`jp undo` brings it back here (then `jp push {remote}` sends it again); "
            "other machines keep their copies, and their next push sends it back: "
            f"delete it there first (`jp conversation rm {cid}`)"
        )
