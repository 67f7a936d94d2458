"""A remote's name and URL checked, jp's refspecs for it, and whether jp made it:
plain data, read without libgit2 (``remotes`` holds what needs the repository)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from gitstore.errors import RemoteSetupError, SyncError
from gitstore.git import refs

TRACKING_ROOT = "refs/jp-remotes/"
SPACES = ("conversations", "archive")  # whole namespaces under refs/ that are jp's

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name) or ".." in name or name.endswith((".lock", ".")):
        raise SyncError(name, "not a valid remote name (letters, digits, '.', '_', '-')")
    return name


# a transport helper named before "::" at the very start (ext::, fd::, foo+bar::);
# an scp-like IPv6 address such as git@[::1]:repo has "::" only inside brackets
_HELPER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+.-]*::")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_url(name: str, url: str) -> str:
    """``url`` as given, if git may be pointed at it; else ``RemoteSetupError``.

    A URL comes from a user's command line, often pasted, and git acts on it:
    ``ext::CMD``, ``fd::N`` (any ``helper::address``) make git run a command or a
    helper, a leading ``-`` reads as an option to the ssh or git child, control
    characters end up in config files and terminals.  Every other form git takes
    (a path, ``user@host:path`` with IPv6 brackets, ``ssh://``, ``https://``,
    ``file://``) passes unchanged.  Shown, a URL's password is hidden
    (``git.command.redact``)."""
    if not url.strip():
        raise RemoteSetupError(name, "needs a URL")
    if url != url.strip():
        raise RemoteSetupError(name, "URL starts or ends with spaces")
    if _CONTROL.search(url):
        raise RemoteSetupError(name, "URL holds control characters")
    if url.startswith("-"):
        raise RemoteSetupError(name, "URL starts with '-', which git would read as an option")
    helper = _HELPER.match(url)
    if helper:
        raise RemoteSetupError(
            name,
            f"URL names the transport {helper.group(0)!r}, which makes git run a command; "
            "use a path, ssh or https URL",
        )
    return url


def tracking_prefix(remote: str) -> str:
    return f"{TRACKING_ROOT}{check_name(remote)}/"


def fetch_refspecs(remote: str) -> list[str]:
    prefix = tracking_prefix(remote)
    specs = [f"+refs/{n}/*:{prefix}{n}/*" for n in SPACES]
    names = (refs.ON_REMOTES.meta, refs.ON_REMOTES.source)
    return specs + [f"+{name}*:{prefix}{name.removeprefix('refs/')}*" for name in names]


def push_refspecs(notes: refs.NotesRefs = refs.STANDALONE) -> list[str]:
    """What plain ``git push`` sends from a store whose notes refs are ``notes``."""
    specs = [f"refs/{n}/*:refs/{n}/*" for n in SPACES]
    return specs + [f"{here}*:{there}*" for here, there in notes.synced()]


PUSH_REFSPECS = tuple(push_refspecs())  # a store of its own


def legacy_refspecs(remote: str) -> set[str]:
    """Refspecs earlier versions of jp wrote (``refs/notes/*``: every notes ref)."""
    return {f"+refs/notes/*:{tracking_prefix(remote)}notes/*", "refs/notes/*:refs/notes/*"}


def jp_refspecs(remote: str) -> set[str]:
    """Every refspec jp writes or wrote for ``remote``, in either kind of store."""
    pushed = push_refspecs(refs.STANDALONE) + push_refspecs(refs.PROJECT)
    return set(fetch_refspecs(remote)) | set(pushed) | legacy_refspecs(remote)


class RemoteInfo(NamedTuple):  # no dataclasses (they load ``inspect``) at start-up
    name: str
    url: str
    fetch: tuple[str, ...]
    push: tuple[str, ...]
    settings: tuple[str, ...] = ()  # its other keys (``prune``, ``pushurl``, ``mirror``...)

    @property
    def configured(self) -> bool:
        """Whether plain ``git fetch`` brings conversations too."""
        return all(spec in self.fetch for spec in fetch_refspecs(self.name))

    @property
    def foreign(self) -> bool:
        """The remote was not made by jp: it has refspecs or settings of its own,
        or no push refspecs (jp gives each remote it makes its push refspecs,
        and never adds them to a remote that existed)."""
        ours = jp_refspecs(self.name)
        if self.settings or any(spec not in ours for spec in self.fetch + self.push):
            return True
        return not self.push


def default_of(remotes: Iterable[RemoteInfo]) -> str | None:
    """The remote ``jp push``/``pull`` use when none is named: the only remote jp
    made, else one jp made called origin.  Never a remote with settings of its own
    (a project's code remote): conversations go there only when it is named."""
    mine = sorted(r.name for r in remotes if not r.foreign)
    if len(mine) == 1:
        return mine[0]
    return "origin" if "origin" in mine else None
