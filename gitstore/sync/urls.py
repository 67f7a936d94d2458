"""A remote's URL: checked before it is written to the config, shown without secrets.

A URL reaches jp from a user's command line, often pasted, and git acts on it:
``ext::CMD`` and ``fd::N`` (and any ``helper::address``) make git run a command
or a helper of that name, a URL that starts with ``-`` reads as an option to
the ssh or git child process, and control characters end up in config files and
terminals.  ``check`` refuses each of those before anything is configured;
every other form git takes (a path, ``scp``-like ``user@host:path`` with IPv6
brackets, ``ssh://``, ``https://``, ``file://``) passes unchanged.

``redact`` (``git.command``, which reads what git prints) hides the password of ``scheme://user:secret@host``, which git keeps
in the config and uses, whenever jp shows the URL.  A URL holding only a token
as its user name (``https://TOKEN@host``) cannot be told from a user name and is
shown as it is.
"""

from __future__ import annotations

import re

from gitstore.errors import RemoteSetupError
from gitstore.git.command import redact

# a transport helper named before "::" at the very start (ext::, fd::, foo+bar::);
# an scp-like IPv6 address such as git@[::1]:repo has "::" only inside brackets
_HELPER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+.-]*::")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check(name: str, url: str) -> str:
    """``url`` as given, if git may be pointed at it; else ``RemoteSetupError``."""
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


__all__ = ["check", "redact"]
