"""The environment of the git that jp runs to reach a remote.

Where someone can answer (jp on a terminal), git and ssh ask for a password or
a key's passphrase as they always do.  Where nobody can (a script, a pipe, an
editor's background sync), they must not ask, or the sync would wait forever
on a prompt no one sees: git's own prompts are turned off
(``GIT_TERMINAL_PROMPT=0``) and ssh runs with ``-o BatchMode=yes``, added to
the user's own ssh command when git would run OpenSSH (``GIT_SSH_COMMAND``, else
``core.sshCommand``, else plain ``ssh``).  Any other ssh program (``GIT_SSH``,
plink, a wrapper script) is left as the user set it up.

Credential helpers, ssh agents and keys without a passphrase work either way.
The user's ``core.sshCommand`` is asked of git only for a remote that may be
reached through ssh (``may_use_ssh``): a remote on this machine never is.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping
from pathlib import PurePath

BATCH = "-o BatchMode=yes"
OPENSSH = ("ssh", "ssh.exe")


def _is_openssh(command: str) -> bool:
    """Whether git treats ``command`` as OpenSSH (it then adds ``-o`` options itself)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return bool(words) and PurePath(words[0]).name.lower() in OPENSSH


def unattended(environ: Mapping[str, str], configured: Callable[[], str]) -> dict[str, str]:
    """``environ`` for a git that must never prompt.  ``configured`` returns the
    user's ``core.sshCommand`` (empty when unset); it is asked only when needed."""
    env = dict(environ)
    env["GIT_TERMINAL_PROMPT"] = "0"
    if env.get("GIT_SSH_COMMAND"):
        command = env["GIT_SSH_COMMAND"]
    elif env.get("GIT_SSH"):
        return env  # a program, not a command line: nothing can be added to it
    else:
        command = configured() or "ssh"
    if _is_openssh(command) and "batchmode" not in command.lower():
        env["GIT_SSH_COMMAND"] = f"{command} {BATCH}"
    return env


LOCAL = ("/", "./", "../", "file://")  # URLs git reaches without ssh


def may_use_ssh(config: Iterable[tuple[str, str]], remote: str) -> bool:
    """Whether git may run ssh to reach ``remote`` (a remote's name or a URL), from
    the git configuration's ``(name, value)`` entries: False only when each of its
    URLs is a path on this machine and no ``insteadOf`` could rewrite one."""
    urls: list[str] = []
    named = False
    for name, value in config:
        key = name.lower()
        if key.endswith(("insteadof", "pushinsteadof")) and key.startswith("url."):
            return True
        if key in (f"remote.{remote.lower()}.url", f"remote.{remote.lower()}.pushurl"):
            named = True
            urls.append(value)
    if not named:
        urls = [remote]
    return not all(url.startswith(LOCAL) for url in urls)
