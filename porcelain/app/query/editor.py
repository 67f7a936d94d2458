"""Writing a query in an editor: `jp q -e`, or `jp q` with no text on a terminal.

The editor is `$JP_EDITOR`, else `$VISUAL`, else `$EDITOR`, else `vi` (a
command line, split as a shell would, never run through one).  It edits a
draft kept in the store's git directory, one per conversation
(`jp/drafts/ID.md`; `jp/draft.md` for a new conversation): the draft stays
until the request is committed, so a query refused after the editor closed
loses nothing, and the next `jp q -e` of that conversation opens it again.
`jp q -e TEXT` with a draft kept puts TEXT under the kept text, never in its
place.  An empty message aborts: nothing is sent, nothing is written.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path

from porcelain.domain.escaping import untrusted_field
from porcelain.errors import UserError

DRAFT = Path("jp") / "draft.md"
DRAFTS = Path("jp") / "drafts"
MAX_DRAFT_BYTES = 1024 * 1024


def editor_command(environ: Mapping[str, str]) -> list[str]:
    for name in ("JP_EDITOR", "VISUAL", "EDITOR"):
        value = environ.get(name, "").strip()
        if value:
            try:
                argv = shlex.split(value)
            except ValueError as exc:
                raise UserError(f"cannot parse ${name}: {exc}", f"fix ${name}") from None
            if argv:
                return argv
    return ["vi"]


def draft_path(gitdir: Path, cid: str | None = None) -> Path:
    """The draft of conversation ``cid`` (None: of a new conversation)."""
    return gitdir / DRAFTS / f"{cid}.md" if cid else gitdir / DRAFT


def edit_query(
    gitdir: Path,
    initial: str,
    environ: Mapping[str, str] | None = None,
    cid: str | None = None,
) -> str:
    """Open the editor on the draft (the kept one, ``initial`` under it); its text, stripped.

    An editor that fails or is missing, and an empty message, are errors that
    say where the draft is."""
    env = os.environ if environ is None else environ
    path = draft_path(gitdir, cid)
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = _read_draft(path) if path.exists() else ""
    if initial or not path.exists():
        text = f"{kept}\n\n{initial}" if kept and initial else initial or kept
        path.write_text(text + ("\n" if text and not text.endswith("\n") else ""))
    argv = editor_command(env)
    shown = untrusted_field(shlex.join(argv))
    try:
        code = subprocess.call([*argv, str(path)])
    except OSError as exc:
        raise UserError(
            f"cannot start the editor {shown}: {exc.strerror or exc}",
            'set $EDITOR (or $JP_EDITOR), or give the text: `jp q "your question"`',
        ) from None
    if code != 0:
        raise UserError(
            f"the editor {shown} exited with {code}; nothing was sent",
            f"the draft is kept in {path}",
        )
    text = _read_draft(path)
    if not text:
        discard_draft(gitdir, cid)
        raise UserError("the message is empty; nothing was sent")
    return text


def _read_draft(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read the draft {path}: {exc.strerror}") from None
    if len(raw) > MAX_DRAFT_BYTES:
        raise UserError(
            f"the message is larger than {MAX_DRAFT_BYTES // 1024} KiB",
            "attach long text with -a FILE instead",
        )
    return raw.decode("utf-8", "replace").strip()


def discard_draft(gitdir: Path, cid: str | None = None) -> None:
    """The request is committed (or the message was empty): the draft has done its job."""
    try:
        draft_path(gitdir, cid).unlink()
    except FileNotFoundError:
        pass
    except OSError:
        pass  # a draft left behind is harmless: it is offered again
