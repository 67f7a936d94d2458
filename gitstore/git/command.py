"""Running the git command line: its environment, its output, a stall watch.

Every git process jp starts is started here: a local one on the store
(``run``: ``update-ref --stdin``, ``fsck``), git's maintenance in
the background (``start``), and one that talks to a remote (``watched``).

The environment.  Where someone can answer (jp on a terminal), git and ssh ask
for a password or a key's passphrase as they always do.  Where nobody can (a
script, a pipe, an editor's background sync), they must not ask, or the sync
would wait forever on a prompt no one sees: git's own prompts are turned off
(``GIT_TERMINAL_PROMPT=0``) and ssh runs with ``-o BatchMode=yes``, added to the
user's own ssh command when git would run OpenSSH (``GIT_SSH_COMMAND``, else
``core.sshCommand``, else plain ``ssh``); any other ssh program (``GIT_SSH``,
plink, a wrapper script) is left as the user set it up.  The user's
``core.sshCommand`` is asked of git only for a remote that may be reached
through ssh (``may_use_ssh``): a remote on this machine never is.

The stall watch.  git has no time limit of its own: a remote that accepts the
connection and then says nothing makes ``git fetch`` or ``git push`` wait for
ever.  While a git that talks to a remote runs, the bytes its processes read
and write (``/proc/<pid>/io``, git's and its helpers', not ssh's, whose
keepalives would hide a server-side git that went silent) are looked at twice a
second; when they have not moved for ``stall`` seconds the processes are killed
and the sync fails with one line naming the stall.  A healthy remote never goes
that long without a byte (git's servers send a keepalive every 5 seconds).
Without ``/proc`` the watch has nothing to read and git runs unwatched.

The output.  Everything git prints may hold a server's text or a URL with a
password: ``error_lines``, ``remote_said`` and ``parse_porcelain`` read it,
``redact`` hides the password, and the porcelain shows it as untrusted.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any, NamedTuple

from gitstore.errors import StoreError, SyncError, environment_fault

# --- a git on the store ------------------------------------------------------


def run(
    gitdir: Path, args: Sequence[str], data: bytes = b"", check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    """``git --git-dir <gitdir> args`` fed ``data``, its output captured.  With
    ``check``, a git that fails raises (a full disk or a read-only store as an
    ``EnvironmentFault``, else ``StoreError`` with git's last line)."""
    try:
        done = subprocess.run(
            ["git", "--git-dir", str(gitdir), *args],
            input=data,
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise environment_fault(exc, str(gitdir)) or StoreError(
            str(gitdir), f"cannot run git: {exc}"
        ) from None
    if check and done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["failed"]
        fault = environment_fault(OSError(said[0]), str(gitdir))
        raise fault or StoreError(str(gitdir), f"git {args[0]}: {said[0]}")
    return done


def version_text(git: str) -> str:
    """What the git at ``git`` says of itself (``git --version``); ``OSError`` when
    it does not run (its time limit included)."""
    try:
        said = subprocess.run([git, "--version"], capture_output=True, text=True, timeout=30)
    except subprocess.SubprocessError as exc:
        raise OSError(str(exc)) from None
    return said.stdout


def start(gitdir: Path, args: Sequence[str], wait: bool) -> subprocess.Popen[bytes] | None:
    """``git --git-dir <gitdir> args`` with no input or output: waited for, or
    started in a session of its own and left to run (its ``Popen``)."""
    command = ["git", "--git-dir", str(gitdir), *args]
    null = subprocess.DEVNULL
    if wait:
        subprocess.run(command, check=False, stdin=null, stdout=null, stderr=null)
        return None
    return subprocess.Popen(command, stdin=null, stdout=null, stderr=null, start_new_session=True)


# --- the environment of a git that reaches a remote ---------------------------

BATCH = "-o BatchMode=yes"
OPENSSH = ("ssh", "ssh.exe")
LOCAL = ("/", "./", "../", "file://")  # URLs git reaches without ssh


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


# --- a git that talks to a remote, watched for a stall ------------------------

STALL_SECONDS = 120.0  # the default: no byte from the remote's git for this long
POLL = 0.5
UNWATCHED = ("ssh",)  # its own traffic (keepalives) is not the remote's git speaking


def watched(
    args: Sequence[str],
    remote: str,
    stall: float | None,
    env: dict[str, str] | None = None,
    stdin: str | bytes | None = None,
    text: bool = True,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(args, capture_output=True)``, but a stall of ``stall``
    seconds (None: no watch) kills the git and raises ``SyncError``."""
    if stall is None:
        return subprocess.run(args, capture_output=True, text=text, input=stdin, env=env)
    proc = subprocess.Popen(
        args,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=text,
        env=env,
    )
    moved, last, pending = time.monotonic(), -1, stdin
    while True:
        try:
            out, err = proc.communicate(pending, timeout=POLL)
            return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        except subprocess.TimeoutExpired:
            pending = None  # sent (or being sent) by the first call
        count, pids = _activity(proc.pid)
        now = time.monotonic()
        if count is None or count != last:
            moved, last = now, -1 if count is None else count
        elif now - moved >= stall:
            _kill(pids)
            proc.communicate()
            raise SyncError(
                remote,
                f"{remote} said nothing for {stall:g} seconds; gave up waiting "
                "(sync.stall_seconds sets how long)",
            )


def _activity(pid: int) -> tuple[int | None, list[int]]:
    """The bytes read and written so far by ``pid`` and the processes below it (ssh
    left out), and their ids; None when ``/proc`` cannot say."""
    total, seen, pids, stack = 0, False, [], [pid]
    while stack:
        p = stack.pop()
        try:
            comm = Path(f"/proc/{p}/comm").read_text().strip()
            io = Path(f"/proc/{p}/io").read_text()
        except (OSError, ValueError):
            continue
        seen = True
        pids.append(p)
        if comm not in UNWATCHED:
            for line in io.splitlines():
                if line.startswith(("rchar:", "wchar:")):
                    total += int(line.split()[1])
        stack += _children(p)
    return (total if seen else None), pids


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            out += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return out


def _kill(pids: list[int]) -> None:
    for pid in reversed(pids):  # the helpers first, then git itself
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


# --- what git prints ----------------------------------------------------------

# scheme://user:password@ anywhere: a URL alone, or inside a line git printed,
# where a URL ends at a space or a quote
_PASSWORD = r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^/@:\s'\"]*):[^/@\s'\"]*@"

RACE_WORDS = (
    "fetch first",
    "non-fast-forward",
    "stale info",
    "already exists",
    "cannot lock",
    "failed to update",
    "non-fastforwardable",
    "not present locally",
)


def redact(text: str) -> str:
    """``text`` (a URL, or a line git printed) with the password of every
    ``scheme://user:password@host`` in it shown as ``***``."""
    return re.sub(_PASSWORD, lambda m: f"{m.group('head')}:***@", text)  # compiled when used


class RefResult(NamedTuple):
    ref: str
    ok: bool
    summary: str = ""

    @property
    def lost_race(self) -> bool:
        """Rejected because the remote moved since it was fetched: pull and retry."""
        return not self.ok and any(word in self.summary for word in RACE_WORDS)


def error_lines(text: str, count: int = 2, limit: int = 300) -> str:
    """git's own error lines (``fatal:``/``error:``), after the line the transport
    printed just before them (ssh's ``Permission denied (publickey).``, without which
    ``Could not read from remote repository`` says nothing), else its last lines;
    each bounded."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    first = next((i for i, line in enumerate(lines) if line.startswith(("fatal:", "error:"))), None)
    if first is None:
        picked = lines[-count:]
    else:
        errors = [line for line in lines[first:] if line.startswith(("fatal:", "error:"))]
        said = [
            line
            for line in lines[:first]
            if not line.startswith(("remote:", "hint:", "warning:", "From ", "To "))
        ]
        picked = said[-1:] + errors[:count]
    picked = [redact(line) for line in picked]  # git names the URL it could not reach
    cut = [line if len(line) <= limit else line[: limit - 1] + "…" for line in picked]
    return "; ".join(cut) or "git failed without a message"


def remote_said(stderr: str, limit: int = 300) -> str:
    """The ``remote:`` lines git relays from the server (a hook's reason), joined and
    bounded: untrusted text, which the porcelain shows as a one-line field."""
    lines = [
        line[len("remote:") :].strip()
        for line in stderr.splitlines()
        if line.startswith("remote:") and line[len("remote:") :].strip()
    ]
    text = redact("; ".join(lines[-3:]))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_porcelain(stdout: str) -> list[RefResult]:
    """Per-ref lines of ``git push --porcelain``: ``<flag>\\t<src>:<dst>\\t<summary>``."""
    out: list[RefResult] = []
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1 or ":" not in parts[1]:
            continue
        flag, spec, summary = parts[0], parts[1], "\t".join(parts[2:])
        dst = spec.rsplit(":", 1)[1]
        out.append(RefResult(dst, flag != "!", summary))
    return out
