"""Reading refs straight from a git directory in the "files" format, without libgit2.

The commands that only read (``show``, ``print``, ``ls``) answer from the
cache once they know the tips, and loading libgit2 costs more than the rest
of such a command.  A ref is a file under the git directory holding an
object id or ``ref: <name>``, unless it was packed into ``packed-refs``; a
loose file wins over a packed line.  Writers replace ref files by renaming
a lock over them, so a read sees the old or the new value, never half.

``plain_gitdir`` says whether a directory is one this module can read; for
anything else (linked worktrees, reftable, a ``.git`` file) the store reads
refs through libgit2 as before.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

from gitstore.git import refs as layout

T = TypeVar("T")

_HEX = frozenset("0123456789abcdef")


def plain_gitdir(path: Path) -> Path | None:
    """The git directory of a store at ``path`` if its refs are plain files, else None."""
    for gitdir in (path / ".git", path):
        if (gitdir / "HEAD").is_file() and (gitdir / "objects").is_dir():
            if (gitdir / "commondir").exists() or (gitdir / "reftable").exists():
                return None
            try:
                config = (gitdir / "config").read_text(errors="replace").lower()
            except OSError:
                return None
            return None if "refstorage" in config else gitdir
    return None


def _oid(text: str) -> str | None:
    value = text.strip()
    return value if len(value) == 40 and _HEX.issuperset(value) else None


# the packed-refs bytes last read per git directory, under their stat: a store with
# 10,000 packed conversations has a 760 KB file, read once per process
_PACKED: dict[Path, tuple[tuple[int, int, int], bytes]] = {}


def _packed_bytes(gitdir: Path) -> bytes:
    path = gitdir / "packed-refs"
    try:
        st = os.stat(path)
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        found = _PACKED.get(gitdir)
        if found is not None and found[0] == key:
            return found[1]
        data = path.read_bytes()
    except OSError:
        return b""
    if data and not data.endswith(b"\n"):
        data += b"\n"
    _PACKED[gitdir] = (key, data)
    return data


# the parse of those bytes, with its names sorted: a pull lists refs several times
_PARSED: dict[Path, tuple[bytes, dict[str, str], list[str]]] = {}


def forget(gitdir: Path) -> None:
    """Drop what is kept of ``gitdir``'s ``packed-refs`` (a folder that goes away)."""
    _PACKED.pop(gitdir, None)
    _PARSED.pop(gitdir, None)


def _parsed(gitdir: Path, data: bytes | None = None) -> tuple[dict[str, str], list[str]]:
    """The records of ``data`` (the file as read now when None), parsed once per bytes."""
    data = _packed_bytes(gitdir) if data is None else data
    found = _PARSED.get(gitdir)
    if found is not None and found[0] is data:  # the same bytes object: the same file
        return found[1], found[2]
    out: dict[str, str] = {}
    for line in data.decode("utf-8", errors="replace").splitlines():
        if not line or line[0] in "#^":
            continue
        oid, _, name = line.partition(" ")
        if _oid(oid) is not None and name:
            out[name] = oid
    names = sorted(out)
    _PARSED[gitdir] = (data, out, names)
    return out, names


def packed_refs(gitdir: Path) -> Mapping[str, str]:
    """Name -> object id of every line of ``packed-refs`` (peeled lines left out)."""
    return _parsed(gitdir)[0]


def packed_ref(gitdir: Path, name: str) -> str | None:
    """The object id ``packed-refs`` holds for ``name``, found without parsing every line:
    by bisection when git wrote the file sorted (it says so in its header), else by search."""
    return _packed_in(_packed_bytes(gitdir), name)


def _packed_in(data: bytes, name: str) -> str | None:
    wanted = name.encode()
    if _sorted(data):
        return _bisect(data, wanted)
    needle = b" " + wanted + b"\n"
    at = data.find(needle)
    while at != -1:
        start = at - 40
        if start == 0 or (start > 0 and data[start - 1 : start] == b"\n"):
            return _oid(data[start:at].decode("ascii", errors="replace"))
        at = data.find(needle, at + 1)
    return None


def _sorted(data: bytes) -> bool:
    """Whether git wrote this packed-refs sorted (its header says so)."""
    return data.startswith(b"#") and b" sorted" in data[: data.find(b"\n")]


def lower_bound(data: bytes, wanted: bytes, lo: int = 0, step: int = 0) -> int:
    """In a sorted packed-refs, the start of the line from which every record's name is
    ``wanted`` or after it (bytewise, as git sorts), and before which none is.

    ``lo``: the start of a line before which every name is before ``wanted``.  ``step``:
    the line is likely a few lines past ``lo`` (the next of many sorted names merged in
    order): probed ``step`` bytes on, then twice as far each time, until one is past it,
    and only then halved (a few probes, where halving the whole file takes eleven)."""
    hi = len(data)  # lo is always the start of a line
    while lo < hi:
        mid = min(lo + step, (lo + hi) // 2) if step else (lo + hi) // 2
        start = max(lo, data.rfind(b"\n", lo, mid) + 1)
        record = start
        while record < hi and data[record : record + 1] in (b"#", b"^"):
            record = data.index(b"\n", record) + 1  # the header and peeled lines
        if record >= hi:
            hi = start
            continue
        end = data.index(b"\n", record)
        if data[record + 41 : end] < wanted:
            lo, step = end + 1, step * 2
        else:
            hi, step = start, 0
    return lo


def _bisect(data: bytes, wanted: bytes) -> str | None:
    """Binary search over the records of a sorted packed-refs."""
    for name, oid in _records_from(data, lower_bound(data, wanted)):
        return oid if name == wanted.decode("utf-8", errors="replace") else None
    return None


def _records_from(data: bytes, at: int) -> Iterator[tuple[str, str | None]]:
    """(name, object id or None when the line holds none) of each record from offset ``at``."""
    while at < len(data):
        end = data.index(b"\n", at)
        line, at = data[at:end], end + 1
        if line and line[:1] not in (b"#", b"^"):
            oid, _, name = line.decode("utf-8", errors="replace").partition(" ")
            yield name, _oid(oid)


def _packed_under(data: bytes, lead: str) -> Iterator[tuple[str, str]]:
    """Every record of a sorted packed-refs whose name starts with ``lead``: the
    records from the first such one, found by bisection, until one does not."""
    for name, oid in _records_from(data, lower_bound(data, lead.encode())):
        if not name.startswith(lead):
            return
        if oid is not None and name:
            yield name, oid


def read_ref(gitdir: Path, name: str, depth: int = 5) -> str | None:
    """The object id ``name`` resolves to (following symbolic refs), or None."""
    try:
        text = (gitdir / name).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return packed_ref(gitdir, name) if name.startswith("refs/") else None
    except IsADirectoryError:
        return None
    if text.startswith("ref:"):
        target = text[4:].strip()
        return read_ref(gitdir, target, depth - 1) if depth > 0 and target else None
    return _oid(text)


#: look-ups in one folder ``Held`` answers by bisection before it takes out the folder's
#: names whole (a bisection in Python costs what about 600 names cost to take out)
BISECTED = 8


class Held:
    """The refs directly under some folders as read once, as a listing reads them (the
    loose files' names, then ``packed-refs``' bytes: ``_snapshot``): which names are
    absent, told with no file read (a bisection of the bytes held, or after ``BISECTED``
    look-ups in a folder a set of its records' names), where a look-up costs a failed
    open and a ``stat`` a name (an import's hundreds of new ids)."""

    def __init__(self, gitdir: Path, folders: Iterable[str]) -> None:
        def listed() -> dict[str, frozenset[str]]:
            out = {}
            for folder in (f.rstrip("/") for f in folders):
                try:
                    out[folder] = frozenset(os.listdir(gitdir / folder))
                except (FileNotFoundError, NotADirectoryError):
                    out[folder] = frozenset()
            return out

        self._loose, self._data = _snapshot(gitdir, listed)
        # a sorted file's records under each folder, named from there (``_run``): an
        # empty folder (the archive, often) then answers with no search at all
        sort = _sorted(self._data)
        self._runs = {f: _run(self._data, f + "/") for f in self._loose} if sort else {}
        self._told: dict[str, bool] = {}  # each name looked up once (an import's, twice)
        self._names: dict[str, int | frozenset[bytes]] = {}  # look-ups so far, then the names

    def absent(self, name: str) -> bool:
        """Whether ``name`` was no ref when read (False: it was, or it is not held)."""
        told = self._told.get(name)
        if told is None:
            folder, _, leaf = name.rpartition("/")
            loose, run = self._loose.get(folder), self._runs.get(folder)
            if loose is None or leaf in loose:
                told = False
            elif run is None:
                told = _packed_in(self._data, name) is None
            else:
                told = not run or not self._in_run(folder, run, leaf.encode())
            self._told[name] = told
        return told

    def _in_run(self, folder: str, run: bytes, leaf: bytes) -> bool:
        """Whether ``run`` (the folder's records) holds ``leaf``.  From the set, a record
        whose object id does not read counts as there: the caller reads it, finding none."""
        names = self._names.get(folder, 0)
        if isinstance(names, int):
            if names < BISECTED:
                self._names[folder] = names + 1
                return _bisect(run, leaf) is not None
            lines = run.split(b"\n")
            names = self._names[folder] = frozenset(n[41:] for n in lines if n[:1] != b"^")
        return leaf in names


def symbolic_target(gitdir: Path, name: str) -> str | None:
    """The ref a symbolic ref names (``JP_HEAD`` -> ``refs/conversations/..``), or None."""
    try:
        text = (gitdir / name).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("ref:"):
        return None
    return text[4:].strip() or None


def list_refs(gitdir: Path, prefixes: Iterable[str]) -> dict[str, str]:
    """Name -> object id of the direct refs under ``prefixes`` (each ending in ``/``),
    loose refs read first, then ``packed-refs`` (``_snapshot``)."""
    wanted = tuple(prefixes)
    loose, data = _snapshot(gitdir, lambda: _loose_refs(gitdir, wanted))
    packed = _parsed(gitdir, data)[0]
    return _overlaid({n: oid for n, oid in packed.items() if n.startswith(wanted)}, loose)


def _snapshot(gitdir: Path, read_loose: Callable[[], T]) -> tuple[T, bytes]:
    """``read_loose()``, then ``packed-refs``' bytes, as git reads them: ``git
    pack-refs`` writes the new ``packed-refs`` before it deletes the loose files, so
    a ref gone from the loose scan is in the packed file read after it; read again
    when ``packed-refs`` was replaced meanwhile."""
    for _ in range(5):
        before = _packed_stat(gitdir)
        loose = read_loose()
        data = _packed_bytes(gitdir)
        if _packed_stat(gitdir) == before:
            break
    return loose, data


def _overlaid(packed: dict[str, str], loose: Mapping[str, str | None]) -> dict[str, str]:
    """``packed`` with the loose refs over it (one not direct, a symbolic ref, hides its name)."""
    for name, oid in loose.items():
        if oid is None:
            packed.pop(name, None)
        else:
            packed[name] = oid
    return packed


def refs_state(gitdir: Path, prefixes: Iterable[str]) -> str:
    """A fingerprint of the refs under ``prefixes`` that costs no parse of ``packed-refs``:
    that file's stat (what git itself trusts to know it unchanged: every writer
    replaces it through a lock file, a new inode) and every loose ref's name and
    content.  Equal fingerprints, equal refs; any ref moved, by jp or plain git,
    changes it."""
    loose = _loose_refs(gitdir, tuple(prefixes))
    try:
        st = os.stat(gitdir / "packed-refs")
        packed = f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    except OSError:
        packed = "-"
    return packed + "".join(f"\n{n} {oid}" for n, oid in sorted(loose.items()))


JOURNALS = ("jp", "ops")  # under the git directory: journals of multi-ref updates


def conversations_state(path: Path) -> tuple[Path, str] | None:
    """The git directory of the store at ``path`` and the fingerprint of its
    conversation refs, the one ``Store.refs.state`` gives.  None when its refs are
    not plain files (only libgit2 can list them), or when a journaled update is
    under way or was left by a killed command (opening the store finishes it, so
    the refs as they are now may not be the refs a command would read)."""
    gitdir = plain_gitdir(path)
    if gitdir is None:
        return None
    try:
        with os.scandir(gitdir.joinpath(*JOURNALS)) as found:
            if any(True for _ in found):
                return None
    except FileNotFoundError:
        pass
    return gitdir, refs_state(gitdir, (layout.LIVE_PREFIX, layout.ARCHIVE_PREFIX))


def moved_names(old: str, new: str) -> set[str] | None:
    """The refs that may differ between two fingerprints of ``refs_state``: the loose
    ones that appeared, went or changed (one gone is the packed one again, or none).
    None when ``packed-refs`` changed too: then only a listing tells."""
    old_packed, _, old_loose = old.partition("\n")
    new_packed, _, new_loose = new.partition("\n")
    if old_packed != new_packed or not old_packed:
        return None
    lines = set(old_loose.split("\n")) ^ set(new_loose.split("\n"))
    return {line.rpartition(" ")[0] for line in lines if line}


def _packed_stat(gitdir: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(gitdir / "packed-refs")
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _loose_refs(gitdir: Path, wanted: tuple[str, ...]) -> dict[str, str | None]:
    """The loose ref files under ``wanted``: name -> object id (None: not a direct ref)."""
    out: dict[str, str | None] = {}
    for prefix in wanted:
        for folder, dirs, files in os.walk(gitdir / prefix):
            dirs.sort()
            rel = Path(folder).relative_to(gitdir).as_posix()
            for file in files:
                if file.endswith(".lock"):
                    continue
                try:
                    text = (Path(folder) / file).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue  # deleted since the listing: packed (read after this) or gone
                out[f"{rel}/{file}"] = _oid(text)
    return out


def _packed_matching(gitdir: Path, data: bytes, wanted: list[tuple[str, bool]]) -> dict[str, str]:
    """The records of packed-refs ``data`` that the patterns match.  In a sorted file
    each pattern's records are found by bisection, and only their lines read (a pull
    lists a few refs of 100,000); an unsorted one is parsed whole, once per file, as
    is any file a listing parsed already."""
    found = _PARSED.get(gitdir)
    reuse = found is not None and found[0] is data
    parse = _parsed(gitdir, data) if reuse or not _sorted(data) else None
    out: dict[str, str] = {}
    for prefix, glob in wanted:
        lead = prefix if glob else prefix.rstrip("/")  # every match starts with it
        if parse is None:
            out.update(
                (n, oid) for n, oid in _packed_under(data, lead) if _matches(n, prefix, glob)
            )
            continue
        packed, names = parse
        for at in range(bisect.bisect_left(names, lead), len(names)):
            if not names[at].startswith(lead):
                break
            if _matches(names[at], prefix, glob):
                out[names[at]] = packed[names[at]]
    return out


def _pattern(text: str) -> tuple[str, bool] | None:
    """A ``git for-each-ref`` pattern as (prefix, glob): a name or folder (``refs/x``,
    ``refs/x/``: itself and what is under it), or a name ending in one ``*`` (which,
    as in git, matches no ``/``).  None for any other glob: git must list it."""
    glob = text.endswith("*")
    body = text[:-1] if glob else text
    if any(c in body for c in "*?[\\") or not body.startswith("refs/"):
        return None
    return body, glob


def _matches(name: str, prefix: str, glob: bool) -> bool:
    if glob:
        return name.startswith(prefix) and "/" not in name[len(prefix) :]
    folder = prefix if prefix.endswith("/") else prefix + "/"
    return name == prefix or name.startswith(folder)


def _loose_matching(gitdir: Path, prefix: str, glob: bool) -> dict[str, str | None]:
    """The loose ref files a pattern can match, read (None: not a direct ref)."""
    base = prefix.rstrip("/")
    if not glob:
        where = gitdir / base
        if where.is_file():
            return {base: _oid(_read_or_empty(where))}
        return _loose_refs(gitdir, (base + "/",)) if where.is_dir() else {}
    folder = gitdir / base.rsplit("/", 1)[0]
    out: dict[str, str | None] = {}
    rel = folder.relative_to(gitdir).as_posix()
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return {}  # none, or git's gc pruned the folder as it packed them: read after this
    for entry in entries:
        name = f"{rel}/{entry.name}"
        if entry.is_file() and not entry.name.endswith(".lock") and _matches(name, prefix, glob):
            out[name] = _oid(_read_or_empty(Path(entry.path)))
    return out


def _read_or_empty(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def matching_refs(gitdir: Path, patterns: Iterable[str]) -> dict[str, str] | None:
    """Name -> object id of the direct refs ``git for-each-ref <patterns>`` lists, read as
    files (loose first, then ``packed-refs``, as ``list_refs``); None when a pattern is
    one only git can match.  Each pattern costs a lookup, not a pass over every ref."""
    parsed = [_pattern(p) for p in patterns]
    if any(p is None for p in parsed):
        return None
    wanted = [p for p in parsed if p is not None]

    def read_loose() -> dict[str, str | None]:
        return {k: v for p, g in wanted for k, v in _loose_matching(gitdir, p, g).items()}

    loose, data = _snapshot(gitdir, read_loose)
    return _overlaid(_packed_matching(gitdir, data, wanted), loose)


# -- which refs of two folders differ, at the cost of what differs ----------------------


def differing(gitdir: Path, mine: str, theirs: str) -> set[str] | None:
    """The names under ``mine`` or ``theirs`` (folders ending in ``/``; each given
    relative to its folder) whose value is not the same in both, at the cost of what
    differs; None when it cannot be told so (``packed-refs`` not sorted, or a peeled
    line in the runs): the caller lists them.

    A push compares this store's conversations with the remote's copies as last
    fetched: listed ref by ref, a pass over 200,000 names at 100,000 conversations.
    In a sorted ``packed-refs`` each folder is one run of lines; with the folders'
    names taken out, equal runs are equal bytes (one comparison in C), and unequal
    ones differ by the lines in one and not the other.  Loose refs are read on top,
    as a listing reads them (``_snapshot``)."""
    loose, data = _snapshot(gitdir, lambda: {p: _loose_refs(gitdir, (p,)) for p in (mine, theirs)})
    if data and not _sorted(data):
        return None
    runs = [_run(data, prefix) for prefix in (mine, theirs)]
    if any(b"\n^" in run or run.startswith(b"^") for run in runs):
        return None
    out: set[str] = set()
    if runs[0] != runs[1]:
        lines = [set(run.split(b"\n")) for run in runs]
        out = {line[41:].decode("utf-8", errors="replace") for line in lines[0] ^ lines[1]}
    names = {n[len(p) :] for p in (mine, theirs) for n in loose[p]}
    for name in names:
        values = [
            loose[p][p + name] if p + name in loose[p] else _bisect(data, (p + name).encode())
            for p in (mine, theirs)
        ]
        if values[0] != values[1]:  # a loose ref hides the packed one of its name
            out.add(name)
        else:
            out.discard(name)
    out.discard("")
    return out


def _run(data: bytes, prefix: str) -> bytes:
    """The lines of the records under ``prefix``, with ``prefix`` taken out of each."""
    lead = prefix.encode()
    start = _past_header(data, lower_bound(data, lead))
    end = lower_bound(data, lead[:-1] + bytes([lead[-1] + 1]))  # past the folder
    while data[end : end + 1] == b"^":  # the peeled line of the run's last record
        end = data.index(b"\n", end) + 1
    return data[start:end].replace(b" " + lead, b" ")


def _past_header(data: bytes, at: int) -> int:
    while data[at : at + 1] == b"#":
        at = data.index(b"\n", at) + 1
    return at
