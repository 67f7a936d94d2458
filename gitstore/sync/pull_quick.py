"""A pull with nothing to do, told by reading two refs as files (docs/sync.md, "A
pull with nothing to do, from a path remote", lists every condition).

For a remote that is a path on this machine, ``nothing_to_pull`` compares the
remote's ``refs/jp/journal`` with the store's copy of it and reads the store's
own state, with no libgit2 and no git process; it applies the rule the whole
pull applies (``journalstate.nothing_to_pull``) and says None (``Doubt``) on
anything else, so the caller runs the whole pull.  The remote is untrusted: its
files are only compared with what this store holds, byte for byte, never
followed or parsed as anything else.  Nothing here reads the environment: the
caller passes the git config files that apply.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from gitstore.sync import journalstate
from gitstore.sync.remotespecs import RemoteInfo, check_name, default_of, tracking_prefix

JOURNAL = "refs/jp/journal"  # journal.REMOTE_REF, without loading libgit2
COPY, INCOMING = "jp/journal", "jp/incoming"  # journal.COPY, journal.INCOMING
STORE_FORMAT = "1"  # gitstore.store.format.FORMAT
MAX_PACKED = 256 << 20  # a packed-refs file larger than this is not read here
MAX_CONFIG = 1 << 20
_HEX = frozenset(b"0123456789abcdef")
# in another git config: what could change which remote, URL or refs a fetch sees
_FOREIGN = ("[remote", "[url", "[include", "hiderefs", "[protocol", "[transfer", "[uploadpack")


class Doubt(Exception):
    """The files cannot say for sure: the whole pull decides."""


def nothing_to_pull(
    gitdir: Path, name: str | None, git_configs: Sequence[Path], uid: int
) -> tuple[str, Path] | None:
    """The remote (and its path) a pull of the store at ``gitdir`` would find nothing
    to do with, the pull counted as a journal pull counts itself; None: run the pull.
    ``name``: the remote named on the command line (None: the default one);
    ``git_configs``: the user's and the system's git config files; ``uid``: whose
    files git accepts."""
    try:
        remote, where = _check(gitdir, name, git_configs, uid)
    except (Doubt, OSError, UnicodeError, ValueError):
        return None
    return remote, where


def _check(
    gitdir: Path, name: str | None, git_configs: Sequence[Path], uid: int
) -> tuple[str, Path]:
    _plain(gitdir, uid)
    for other in git_configs:
        if other.exists() and any(m in _text(other).lower() for m in _FOREIGN):
            raise Doubt(str(other))
    sections = _strict_config(_text(gitdir / "config"))
    jp = sections.get(("jp", None), {})
    if jp.get("store") != ["true"] or jp.get("format") != [STORE_FORMAT]:
        raise Doubt("not a store of this format")
    if sections.get(("core", None), {}).get("repositoryformatversion", ["0"]) != ["0"]:
        raise Doubt("extensions")
    remote = _remote(sections, name)
    where = _remote_path(sections[("remote", remote)], uid)
    _idle(gitdir)
    with _sync_lock_free(gitdir, remote):
        if journalstate.reconcile_due(gitdir, remote) is not None:
            raise Doubt("the pull would reconcile")
        tracking = tracking_prefix(remote)
        if _ref(gitdir, tracking + INCOMING) is not None:
            raise Doubt("a fetched journal waits")
        _only_journal(where)
        # refused refs recorded: whether one waits to be checked again is the pull's to read
        recheck = os.path.lexists(gitdir / "jp" / "quarantine" / f"{remote}.json")
        if not journalstate.nothing_to_pull(
            _ref(gitdir, tracking + COPY), _ref(where, JOURNAL), recheck
        ):
            raise Doubt("the journal moved, or refused refs are recorded")
        if not journalstate.record_pull(gitdir, remote, reconciled=False):
            raise Doubt("the count was not written")  # a read-only store: the pull says so
    return remote, where


# -- the two git directories ------------------------------------------------------


def _plain(gitdir: Path, uid: int) -> None:
    """A git directory whose refs are plain files, this user's."""
    st = os.stat(gitdir)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
        raise Doubt("not a directory of this user's")
    if not (gitdir / "HEAD").is_file() or not (gitdir / "objects").is_dir():
        raise Doubt("not a git directory")
    for odd in (".git", "commondir", "reftable", "gitdir"):
        if os.path.lexists(gitdir / odd):
            raise Doubt(odd)


def _text(path: Path) -> str:
    with open(path, "rb") as f:
        data = f.read(MAX_CONFIG + 1)
    if len(data) > MAX_CONFIG:
        raise Doubt(f"{path}: too large")
    return data.decode("utf-8")


Sections = dict[tuple[str, str | None], dict[str, list[str]]]


def _strict_config(text: str) -> Sections:
    """A git config file of plain ``[section]``, ``[section "sub"]`` and ``key = value``
    lines (section and key names lowercased, as git reads them); anything git could
    read differently (quotes, escapes, continuations, includes) is doubt."""
    out: Sections = {}
    current: dict[str, list[str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line[0] == "[":
            current = out.setdefault(_section(line), {})
            continue
        key, sep, value = line.partition("=")
        key, value = key.strip().lower(), value.strip()
        if current is None or not sep or not key.replace("-", "").isalnum():
            raise Doubt(f"config line {raw!r}")
        if any(c in value for c in '"\\#;') or value.endswith("\\"):
            raise Doubt(f"config value {raw!r}")
        current.setdefault(key, []).append(value)
    return out


def _section(line: str) -> tuple[str, str | None]:
    if not line.endswith("]"):
        raise Doubt(f"config section {line!r}")
    head = line[1:-1].strip()
    name, _, sub = head.partition(" ")
    name = name.lower()
    if name.startswith("include") or not name.isalnum():
        raise Doubt(f"config section {line!r}")
    if not sub:
        return name, None
    sub = sub.strip()
    if len(sub) < 2 or sub[0] != '"' or sub[-1] != '"' or any(c in sub[1:-1] for c in '"\\'):
        raise Doubt(f"config section {line!r}")
    return name, sub[1:-1]


def _remote(sections: Sections, name: str | None) -> str:
    """The remote a pull uses (``remotes.default`` when none is named)."""
    found = {sub: keys for (section, sub), keys in sections.items() if section == "remote" and sub}
    if name is None:
        name = default_of(_info(n, keys) for n, keys in found.items())
        if name is None:
            raise Doubt("no default remote")
    check_name(name)
    if name not in found:
        raise Doubt("no such remote")
    return name


def _info(name: str, keys: dict[str, list[str]]) -> RemoteInfo:
    settings = tuple(sorted(set(keys) - {"url", "fetch", "push"}))
    url = keys.get("url", [""])[-1]
    return RemoteInfo(
        name, url, tuple(keys.get("fetch", [])), tuple(keys.get("push", [])), settings
    )


def _remote_path(keys: dict[str, list[str]], uid: int) -> Path:
    """The remote's git directory: an absolute path to a bare repository."""
    urls = keys.get("url", [])
    if len(urls) != 1 or not urls[0].startswith("/") or set(keys) - {"url", "fetch", "push"}:
        raise Doubt("not one plain path")
    where = Path(urls[0])
    _plain(where, uid)
    config = _text(where / "config").lower()
    if any(m in config for m in ("hiderefs", "[include", "refstorage", "[extensions")):
        raise Doubt("the remote's config")
    return where


# -- the store's own state ----------------------------------------------------------


def _idle(gitdir: Path) -> None:
    """Nothing for the store's repair to finish (``Store.repair`` would)."""
    for folder in ("ops", "packing", "kept", "oplog"):
        try:
            with os.scandir(gitdir / "jp" / folder) as found:
                if any(True for _ in found):
                    raise Doubt(f"jp/{folder}")
        except FileNotFoundError:
            continue


@contextmanager
def _sync_lock_free(gitdir: Path, remote: str) -> Iterator[None]:
    """Share the sync lock of ``remote`` while reading (``lock.exclusive``: a pull or
    push running holds it): doubt when it is held."""
    try:
        fd = os.open(gitdir / "jp" / "locks" / f"sync.{remote}.lock", os.O_RDONLY)
    except FileNotFoundError:
        raise Doubt("never synced") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Doubt("a sync runs") from None
        yield
    finally:
        os.close(fd)


# -- refs, read strictly ------------------------------------------------------------


def _loose(gitdir: Path, name: str) -> bytes | None:
    """The loose ref file's bytes (None: none); doubt for a symlink on its path, a
    file that is not regular or longer than an object id."""
    path = gitdir
    parts = name.split("/")
    for i, part in enumerate(parts):
        path = path / part
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        last = i == len(parts) - 1
        if stat.S_ISLNK(st.st_mode) or not (stat.S_ISREG if last else stat.S_ISDIR)(st.st_mode):
            raise Doubt(f"{name}: not a plain file")
    if st.st_size > 41:
        raise Doubt(f"{name}: {st.st_size} bytes")
    with open(path, "rb") as f:
        return f.read(42)


def _packed(gitdir: Path) -> bytes:
    path = gitdir / "packed-refs"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return b""
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_PACKED:
        raise Doubt("packed-refs")
    with open(path, "rb") as f:
        return f.read(MAX_PACKED + 1)


def _oid(value: bytes, name: str) -> str:
    value = value.removesuffix(b"\n")
    if len(value) != 40 or not _HEX.issuperset(value):
        raise Doubt(f"{name}: not an object id")
    return value.decode("ascii")


def _ref(gitdir: Path, name: str) -> str | None:
    """The object id ``name`` holds (loose, else packed); None: no such ref."""
    loose = _loose(gitdir, name)
    if loose is not None:
        return _oid(loose, name)
    data = _packed(gitdir)
    needle = b" " + name.encode() + b"\n"
    found: str | None = None
    for line in _lines_with(data, needle):
        if found is not None:
            raise Doubt(f"{name}: packed twice")
        if len(line) != 40 + len(needle):  # exactly "<oid> <name>": no other name ends so
            raise Doubt(f"{name}: an odd packed line")
        found = _oid(line[:40], name)
    return found


def _lines_with(data: bytes, needle: bytes) -> Iterator[bytes]:
    """Each line of ``data`` that ends with ``needle`` (which ends in a newline)."""
    at = data.find(needle)
    while at != -1:
        start = data.rfind(b"\n", 0, at) + 1
        yield data[start : at + len(needle)]
        at = data.find(needle, at + 1)


def _only_journal(where: Path) -> None:
    """The remote holds no ref but the journal that ``refs/jp/journal*`` matches."""
    try:
        with os.scandir(where / "refs" / "jp") as found:
            names = {e.name for e in found}
    except FileNotFoundError:
        names = set()
    if any(n.startswith("journal") and n != "journal" for n in names):
        raise Doubt("another ref beside the journal")
    data = _packed(where)
    at = data.find(b" " + JOURNAL.encode())
    while at != -1:
        end = at + 1 + len(JOURNAL)
        if data[end : end + 1] != b"\n":
            raise Doubt("another packed ref beside the journal")
        at = data.find(b" " + JOURNAL.encode(), end)
