"""Where ``git push`` is pointed: a remote's URL, or its name.

By its name, git also writes a remote-tracking copy (a loose file) of every ref
it sent, under the remote's fetch refspecs; jp writes those copies itself,
many at once in one step (``push._track``), so for the 100,000 refs of a
first push git's copies are pure cost.  A remote that is one URL and jp's
refspecs, nothing else (as ``jp remote add`` makes it), is therefore pushed to
by that URL: the same server, the same ``insteadOf`` rules, credentials and
``http.<url>.*`` settings.  Any other remote (a ``pushurl``, settings of its own,
several URLs, a relative path) is pushed to by its name, as git would.
"""

from __future__ import annotations

import pygit2

from gitstore.sync import remotes


def target(repo: pygit2.Repository | None, remote: str) -> str:
    """What to name on ``git push``'s command line for ``remote``."""
    if repo is None:
        return remote
    info = remotes.find(repo, remote)
    if info is None or info.settings or not _absolute(info.url):
        return remote
    try:
        urls = [str(u) for u in repo.config.get_multivar(f"remote.{remote}.url")]
    except (KeyError, pygit2.GitError):
        return remote
    return info.url if urls == [info.url] else remote


def _absolute(url: str) -> bool:
    """Whether git reads ``url`` the same from any folder: a URL, ``host:path`` (a
    colon before any slash), or an absolute path; never one git could take for an
    option (the name, checked, cannot be)."""
    if url.startswith("-") or any(c in url for c in "\n\0"):
        return False
    colon, slash = url.find(":"), url.find("/")
    return url.startswith("/") or (colon > 0 and (slash < 0 or colon < slash))
