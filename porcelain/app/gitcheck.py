"""Whether this machine has the git jp needs, and what to say when it has not.

jp writes its store through libgit2, but it reaches remotes through the git
command line alone (``gitstore.sync.transport``: atomic pushes, git's own ssh
and credentials) and every import indexes its pack with ``git index-pack``; only git's gc packs
the store (``gitstore.store.maintenance``).
``--no-write-fetch-head``, which every fetch passes, came in git 2.29.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping

from gitstore import git_version_text

MINIMUM = (2, 29)
NEEDED = "jp needs git 2.29 or newer"
INSTALL = "install git (your system's package, or https://git-scm.com), then run this again"
_VERSION = re.compile(r"git version (\d+)\.(\d+)")


def find(environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The git on ``environ``'s PATH, and why it will not do (None when it will)."""
    git = shutil.which("git", path=environ.get("PATH"))
    if git is None:
        return None, f"git was not found on PATH; {NEEDED} to sync, to import and to pack the store"
    try:
        said = git_version_text(git)  # run by gitstore's git floor, as every git jp starts
    except OSError as exc:
        return git, f"git at {git} does not run ({exc}); {NEEDED}"
    found = _VERSION.search(said)
    if found is None:
        return git, f"`{git} --version` did not say which git it is; {NEEDED}"
    version = (int(found[1]), int(found[2]))
    if version < MINIMUM:
        return git, f"git {version[0]}.{version[1]} is older than 2.29; {NEEDED}"
    return git, None
