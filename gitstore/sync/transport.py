"""Moving refs between a store and a remote.

The git command line is the transport, and the only one: it uses the user's
own credentials, ssh setup and URL rewrites, takes glob refspecs, reports per
ref (``git push --porcelain``) and pushes atomically (a journal entry lands
with its refs or not at all).  Every import already needs ``git index-pack``,
so jp requires git (2.29 or newer: ``--no-write-fetch-head``); libgit2's
remote API, once a fallback for machines without it, is gone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from gitstore.errors import SyncError
from gitstore.fs import retry
from gitstore.fs.place import Place
from gitstore.git import command, sidegit
from gitstore.git.command import RefResult, error_lines, parse_porcelain, remote_said
from gitstore.git.refs import files as refread
from gitstore.store import maintenance
from gitstore.sync import remotes
from gitstore.sync.plan import RemoteUpdate

if TYPE_CHECKING:
    import subprocess

CHUNK = 2000  # updates per `git push` from the store, to stay far below the argument limit
# the store logs every ref (core.logAllRefUpdates=always); the copies git writes
# for sync (remote-tracking refs) are forced copies and need no reflog
NO_REFLOG = ("-c", "core.logAllRefUpdates=false")
# what a remote sends is checked by git as it arrives (a malformed object never lands)
FSCK = ("-c", "fetch.fsckObjects=true")


@dataclass(frozen=True, slots=True)
class RefRow:
    """A ref as listed: its name, the object it names and that object's type."""

    name: str
    oid: str
    kind: str  # commit, tree, blob, tag (or missing)


def choose(
    repo: pygit2.Repository,
    git: str,
    environ: Mapping[str, str] | None = None,
    stall: float | None = command.STALL_SECONDS,
) -> GitCli:
    """The git command line at ``git`` (jp syncs through git alone).  With
    ``environ``, git runs in it and never prompts (``gitstore.git.command``):
    nobody is there to answer; without, git inherits this process's environment.
    A git that reaches the remote is given up after ``stall`` seconds without a
    byte (``gitstore.git.command``; None: never)."""
    if not git:
        raise SyncError("git", "jp syncs through the git command line, and none was found")
    return GitCli(git, Path(repo.path), environ, repo, stall)


_KINDS = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}


def object_kind(repo: pygit2.Repository, oid: str) -> str:
    """An object's type, read from its header (its content is not loaded)."""
    try:
        kind, _ = repo.odb.read_header(oid)
    except (KeyError, ValueError, pygit2.GitError):
        return "missing"
    return _KINDS.get(int(kind), "missing")


class GitCli:
    """A store's git command line: every fetch, push and ref listing of a sync."""

    name = "git"

    def __init__(
        self,
        git: str,
        gitdir: Path,
        environ: Mapping[str, str] | None = None,
        repo: pygit2.Repository | None = None,
        stall: float | None = command.STALL_SECONDS,
    ) -> None:
        self.git = git
        self.stall = stall  # seconds without a byte from the remote before giving up
        self.gitdir = gitdir
        self.repo = repo  # with it, refs under folders are read as files, not by a git
        self.environ = None if environ is None else dict(environ)
        self._envs: dict[bool, dict[str, str]] = {}  # by whether ssh may be run

    def env(self, remote: str | None = None) -> dict[str, str] | None:
        """The environment of a git that reaches ``remote`` (None: no remote)."""
        if self.environ is None:
            return None
        ssh = remote is not None and self._may_use_ssh(remote)
        if ssh not in self._envs:
            asked = self._ssh_command if ssh else lambda: ""
            self._envs[ssh] = command.unattended(self.environ, asked)
        return self._envs[ssh]

    def _may_use_ssh(self, remote: str) -> bool:
        if self.repo is None:
            return True
        try:
            entries = [(e.name, e.value or "") for e in self.repo.config]
        except pygit2.GitError:
            return True
        return command.may_use_ssh(entries, remote)

    def _ssh_command(self) -> str:
        """The user's ``core.sshCommand``, as git reads it (empty when unset)."""
        proc = self._run(["config", "--get", "core.sshCommand"], env=self.environ)
        return proc.stdout.strip()

    def _run(
        self,
        args: Sequence[str],
        stdin: str = "",
        remote: str | None = None,
        env: dict[str, str] | None = None,
        gitdir: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        argv = [self.git, "--git-dir", str(gitdir or self.gitdir), *args]
        chosen = env if env is not None else self.env(remote)
        stall = self.stall if remote is not None else None  # it talks to the remote: watched
        try:
            return command.watched(argv, remote or "git", stall, chosen, stdin)
        except OSError as exc:
            raise SyncError(args[-1] if args else "git", f"cannot run git: {exc}") from None

    def fetch(
        self, remote: str, refspecs: Sequence[str], prune: bool = True, tips: Sequence[str] = ()
    ) -> None:
        """Fetch ``refspecs``; ``tips``: local refs offered as what this side has
        (none: every ref).  git checks every fetched object (fsck) and keeps none
        of a pack that fails."""
        args = [*NO_REFLOG, *FSCK, "fetch", "--no-tags", "--quiet", "--no-auto-gc"]
        args += ["--no-write-fetch-head", *(f"--negotiation-tip={t}" for t in tips)]
        args += ["--prune", remote] if prune else [remote]
        args += refspecs
        for _ in retry.pausing((0.2, 1.0, 3.0)):
            # another fetch is writing the same copies (say, one left running by
            # an interrupted jp): they are forced copies, so wait and fetch again
            proc = self._run(args, remote=remote)
            if proc.returncode == 0 or "cannot lock ref" not in proc.stderr:
                break
        if proc.returncode != 0:
            raise SyncError(remote, error_lines(proc.stderr))

    def push(self, remote: str, updates: Sequence[RemoteUpdate]) -> list[RefResult]:
        """Send ``updates`` from the side repository (``sidegit.for_push``), which holds
        the refs to set under the remote's names: one glob per namespace sends them
        (git matches each explicit refspec against every ref, quadratic: 5 s for
        1,000 refs).  A store the side repository cannot read pushes from itself,
        its sources named by object id, in chunks far below the argument limit."""
        sets = {u.ref: u.new for u in updates if u.new is not None}
        with sidegit.for_push(self.gitdir, remote, sets) as side:
            if side is not None:
                spaces = sorted({name.split("/")[1] for name in sets})
                return self._push(remote, [f"refs/{s}/*:refs/{s}/*" for s in spaces], updates, side)
        results: list[RefResult] = []
        for start in range(0, len(updates), CHUNK):
            chunk = updates[start : start + CHUNK]
            results += self._push(remote, [f"{u.new}:{u.ref}" for u in chunk if u.new], chunk)
        return results

    def maintain(self) -> None:
        """git's own housekeeping (libgit2 never packs), after the sync, not during it;
        no git started when its thresholds say it has nothing to do (``maintenance.due``)."""
        if self.repo is None or maintenance.due(Place.of(self.repo, self.gitdir)):
            self._run(["gc", "--auto", "--quiet"])

    def pack_refs(self) -> None:
        """Pack every ref (after a pull that created many, as ``git clone`` leaves them)."""
        self._run(["pack-refs", "--all"])

    def list_refs(self, prefixes: Sequence[str]) -> list[RefRow]:
        """Every ref of the store under ``prefixes``, however deep its name: read as
        files when the store allows it (``refread.matching_refs``: no git
        process), else through ``git for-each-ref``."""
        plain = refread.plain_gitdir(self.gitdir) if self.repo is not None else None
        found = refread.matching_refs(plain, prefixes) if plain is not None else None
        if found is not None and self.repo is not None:
            repo, listed = self.repo, sorted(found.items())
            return [RefRow(name, oid, object_kind(repo, oid)) for name, oid in listed]
        fmt = "--format=%(objectname) %(objecttype) %(refname)"
        proc = self._run(["for-each-ref", fmt, *prefixes])
        if proc.returncode != 0:
            raise SyncError("git for-each-ref", error_lines(proc.stderr))
        rows: list[RefRow] = []
        for line in proc.stdout.splitlines():
            oid, _, rest = line.partition(" ")
            kind, _, name = rest.partition(" ")
            if name:
                rows.append(RefRow(name, oid, kind or "missing"))
        return rows

    def url(self, remote: str) -> str | None:
        """The URL git reaches ``remote`` at (``url.*.insteadOf`` applied)."""
        proc = self._run(["ls-remote", "--get-url", remote])
        return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None

    def ls_remote(self, remote: str) -> dict[str, str]:
        """The remote's refs under ``refs/``: name -> object id."""
        proc = self._run(["ls-remote", "--refs", remote], remote=remote)
        if proc.returncode != 0:
            raise SyncError(remote, error_lines(proc.stderr))
        out: dict[str, str] = {}
        for line in proc.stdout.splitlines():
            oid, _, name = line.partition("\t")
            if name.startswith("refs/"):
                out[name] = oid.strip()
        return out

    def delete_refs(self, names: Sequence[str]) -> None:
        self._update_refs([f"delete {name}" for name in names])

    def set_refs(self, values: Mapping[str, str | None]) -> None:
        """Point each ref at its commit (None: delete it) in one git process, which
        finds each in packed-refs by bisection (libgit2 parses all of it per write)."""
        names = sorted(values)
        self._update_refs(
            [f"update {n} {values[n]}" if values[n] else f"delete {n}" for n in names]
        )

    def _update_refs(self, commands: list[str]) -> None:
        if not commands:
            return
        args = [*NO_REFLOG, "update-ref", "--stdin"]
        proc = self._run(args, "\n".join(commands) + "\n")
        if proc.returncode != 0:
            raise SyncError("git update-ref", error_lines(proc.stderr))

    def _push(
        self,
        remote: str,
        specs: list[str],
        updates: Sequence[RemoteUpdate],
        side: Path | None = None,
    ) -> list[RefResult]:
        # atomic: the journal moves with the refs it names, or nothing moves
        args = [*NO_REFLOG, "push", "--porcelain", "--no-verify", "--atomic"]
        for u in updates:
            if u.new is None:
                args.append(f"--force-with-lease={u.ref}:{u.lease or ''}")
                specs.append(f":{u.ref}")
            elif u.lease is not None:  # the journal: a new root replaces it only if unmoved
                args.append(f"--force-with-lease={u.ref}:{u.lease}")
        where = push_target(self.repo, remote)
        proc = self._run([*args, where, *specs], remote=remote, gitdir=side)
        found = parse_porcelain(proc.stdout)
        if proc.returncode != 0 and not found:
            raise SyncError(remote, error_lines(proc.stderr))
        said = remote_said(proc.stderr)
        if said:  # the remote's own reason (a hook's message), beside git's summary
            found = [
                r if r.ok else RefResult(r.ref, False, f"{r.summary}; the remote said: {said}")
                for r in found
            ]
        by_ref = {r.ref: r for r in found}
        # a ref git did not report was not pushed
        return [by_ref.get(u.ref, RefResult(u.ref, False, "not reported by git")) for u in updates]


Transport = GitCli  # the one transport (the name the rest of sync/ types with)


def push_target(repo: pygit2.Repository | None, remote: str) -> str:
    """What to name on ``git push``'s command line for ``remote``: its URL, or its name.

    By its name, git also writes a loose remote-tracking copy of every ref it sent;
    jp writes those itself, many in one step (``push._track``), so for the 100,000
    refs of a first push git's copies are pure cost.  A remote that is one absolute
    URL and jp's refspecs (as ``jp remote add`` makes it) is pushed to by that URL:
    the same server, ``insteadOf`` rules, credentials and ``http.<url>.*`` settings.
    Any other (a ``pushurl``, settings of its own, several URLs, a relative path)
    is pushed to by its name, as git would."""
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
