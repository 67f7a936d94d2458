"""Which refs of one folder differ from those of another, at the cost of what differs.

A push compares this store's conversations with the copies of the remote's as
last fetched (``refs/conversations/<id>`` with ``refs/jp-remotes/<remote>/
conversations/<id>``): only those that differ can have anything to send.  Listed
ref by ref that is a pass over 200,000 names at 100,000 conversations.  In a
sorted ``packed-refs`` both folders are one run of lines each; with the folders'
names taken out of their lines, two equal runs are equal bytes (one comparison in
C), and unequal ones differ by the lines in one and not the other.  Loose refs,
which a write leaves until git packs them, are read on top, as a listing reads
them: loose first, then ``packed-refs``, again if it was replaced meanwhile.
"""

from __future__ import annotations

from pathlib import Path

from gitstore.git.refs import files as refread

_ATTEMPTS = 5


def differing(gitdir: Path, mine: str, theirs: str) -> set[str] | None:
    """The names under ``mine`` or ``theirs`` (folders ending in ``/``; each given
    relative to its folder) whose value is not the same in both; None when it cannot
    be told this way (``packed-refs`` not sorted, or a peeled line in the runs): the
    caller lists them."""
    for _ in range(_ATTEMPTS):
        before = refread.packed_stat(gitdir)
        loose = {p: refread.loose_refs(gitdir, (p,)) for p in (mine, theirs)}
        data = refread.packed_bytes(gitdir)
        if refread.packed_stat(gitdir) == before:
            break
    if data and not (data.startswith(b"#") and b" sorted" in data[: data.find(b"\n")]):
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
            loose[p][p + name] if p + name in loose[p] else _packed(data, p + name)
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
    start = _past_header(data, refread.lower_bound(data, lead))
    end = refread.lower_bound(data, lead[:-1] + bytes([lead[-1] + 1]))  # past the folder
    while data[end : end + 1] == b"^":  # the peeled line of the run's last record
        end = data.index(b"\n", end) + 1
    return data[start:end].replace(b" " + lead, b" ")


def _packed(data: bytes, name: str) -> str | None:
    at = _past_header(data, refread.lower_bound(data, name.encode()))
    end = data.find(b"\n", at)
    if end < 0 or data[at + 41 : end] != name.encode():
        return None
    return data[at : at + 40].decode("ascii", errors="replace")


def _past_header(data: bytes, at: int) -> int:
    while data[at : at + 1] == b"#":
        at = data.index(b"\n", at) + 1
    return at
