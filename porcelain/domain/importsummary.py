"""The import summary: what the last session import of a set of roots left, so
that the next one, when nothing changed, is answered without the store.

One small JSON file per tool and set of roots in the store's local state
(``<gitdir>/jp/session-import/``, never synced), replaced whole at the end of
every session import that saw each file up to its end.  It holds:

- ``refs``: the fingerprint of every conversation ref taken after the import
  wrote (any ref moved since, by jp or plain git, changes it);
- ``config``: the SHA-1 of the user's and the store's configuration files
  (they bound the line an import reads);
- ``files``: per file, in the order the import found them: its resolved path
  and path relative to the tool's root, the bytes read and their SHA-1, the
  records they held, the conversation and its tip.

It is untrusted local data: ``porcelain/early/reimport.py`` parses it
defensively and only compares it with what it finds itself; nothing in it
names a file to open.  See docs/sessions.md, "Re-importing unchanged files".
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from porcelain.domain.places import user_config_path
from porcelain.domain.sessionfiles import default_roots

VERSION = 1
FOLDER = ("jp", "session-import")
MAX_BYTES = 8 << 20  # a summary larger than this is not read (it is rewritten)
BLOCK = 1 << 20  # bytes read at a time when hashing a file's start


def roots_of(tool: str, paths: Sequence[Path]) -> list[str]:
    """The roots an import reads, resolved (PATHs, else the tool's own location)."""
    return [str(p.resolve()) for p in (list(paths) or default_roots(tool))]


def summary_path(gitdir: Path, tool: str, roots: Sequence[str]) -> Path:
    key = hashlib.sha1("\0".join([tool, *roots]).encode("utf-8", "surrogateescape"))
    return gitdir.joinpath(*FOLDER) / f"{tool}-{key.hexdigest()[:16]}.json"


def config_mark(environ: Mapping[str, str], gitdir: Path) -> dict[str, Any]:
    """What the configuration files hold now: path and SHA-1 (None: no such file)."""
    user = user_config_path(environ)
    return {
        "user": [str(user), _file_sha1(user)],
        "store": _file_sha1(gitdir / "jp" / "config.toml"),
    }


def _file_sha1(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return hashlib.sha1(data).hexdigest()


def prefix_sha1(handle: BinaryIO, size: int) -> str | None:
    """The SHA-1 of the next ``size`` bytes of ``handle`` (None: the file is shorter)."""
    digest = hashlib.sha1()
    left = size
    while left > 0:
        block = handle.read(min(BLOCK, left))
        if not block:
            return None
        digest.update(block)
        left -= len(block)
    return digest.hexdigest()
