"""A small bare repository beside the store that borrows its objects: where a
narrow fetch (``gitstore.sync.beside``) and every push run, so that git does not
pay for every ref the store holds.

git reads all of a repository's refs for any push or fetch in it: a push of 10
refs from a store of 100,000 conversations (and as many copies) spent 1.5 s in
git before it spoke to the remote, loading and matching the store's refs, and
0.8 s more afterwards.  The side repository holds no refs but what the caller
writes into it (a push's, however many, in one ``packed-refs`` file); its objects
are the store's (``objects/info/alternates``) and its configuration includes the
store's, so the remote, its URL rewrites, its credentials and its transport
options are the ones git reads in the store.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from gitstore.git.refs import files as refread


def folder(gitdir: Path, kind: str, remote: str) -> Path:
    """The side repository of ``kind`` (``fetch``, ``push``) for ``remote``: one per
    remote, used only under that remote's sync lock."""
    tag = hashlib.sha256(remote.encode()).hexdigest()[:16]
    return gitdir / "jp" / f"{kind}-{tag}.git"


def usable(gitdir: Path) -> bool:
    """Whether git in a side repository reads this store as git in it would: a plain
    git directory of SHA-1 objects, whose path can be written into a config."""
    odd = any(c in str(gitdir.absolute()) for c in '"\\\n')
    if refread.plain_gitdir(gitdir) != gitdir or odd:
        return False
    try:
        text = (gitdir / "config").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False
    return "objectformat" not in text and "[extensions" not in text


def prepare(side: Path, gitdir: Path, refs: Mapping[str, str], core: str = "") -> None:
    """A bare repository at ``side`` that borrows the store's objects, reads the
    store's configuration, then its own (``core``: lines of its ``[core]``), and
    holds ``refs`` (name -> id) as loose files."""
    for sub in ("objects/info", "objects/pack", "refs"):
        (side / sub).mkdir(parents=True, exist_ok=True)
    (side / "HEAD").write_text("ref: refs/heads/main\n")
    gitdir = gitdir.absolute()  # both paths below would be read relative to ``side``
    (side / "objects" / "info" / "alternates").write_text(str(gitdir / "objects") + "\n")
    (side / "config").write_text(
        f'[include]\n\tpath = "{gitdir / "config"}"\n'
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
        f"\tlogAllRefUpdates = false\n{core}"
    )
    for name, oid in refs.items():
        path = side / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(oid + "\n")


@contextmanager
def for_push(gitdir: Path, remote: str, refs: Mapping[str, str]) -> Iterator[Path | None]:
    """A side repository to push ``remote`` from, holding ``refs`` (what to send, by
    the remote's names), removed after (None: push from the store)."""
    if not usable(gitdir):
        yield None
        return
    side = folder(gitdir, "push", remote)
    shutil.rmtree(side, ignore_errors=True)  # a killed push's
    try:
        prepare(side, gitdir, {})
        # sorted by the bytes of the names, as git reads it; no peeled lines: git peels itself
        named = sorted((name.encode(), oid.encode()) for name, oid in refs.items())
        lines = b"".join(b"%s %s\n" % (oid, name) for name, oid in named)
        (side / "packed-refs").write_bytes(b"# pack-refs with: sorted \n" + lines)
    except OSError:
        shutil.rmtree(side, ignore_errors=True)
        yield None
        return
    try:
        yield side
    finally:
        shutil.rmtree(side, ignore_errors=True)
