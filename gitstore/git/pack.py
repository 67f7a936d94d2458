"""git's pack files: the one writer of them in jp (``PackFile``).

A pack of any size is streamed to a file object by object (whole objects, never
deltas, deflated at the fastest level; a tree, mostly object ids, and a short blob
or commit only stored in zlib's format, see ``deflated``), then closed and indexed
from what it kept of each entry as it was written (pack version 2, index version 2,
SHA-1 names, as ``git index-pack`` would index the same pack): an import's chains
(``store.packwrite``), a notes commit of many notes.  libgit2's pack builder would
read each object back and search for deltas.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import struct
import sys
import zlib
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path

from gitstore.git.objects import BLOB, COMMIT, TREE, object_id
from gitstore.git.objects import folder as objects_folder

# a pack entry's type (as pygit2's ``ObjectType`` numbers them)
KINDS = frozenset({1, 2, 3, 4})  # commit, tree, blob, tag
_BIG = 0x7FFFFFFF  # an offset past this needs the index's 64-bit table


def folder(gitdir: Path) -> Path:
    """Where the store's packs are (``objects/pack``)."""
    return objects_folder(gitdir) / "pack"


def count(gitdir: Path) -> int:
    """The packs in the store."""
    try:
        return sum(1 for name in os.listdir(folder(gitdir)) if name.endswith(".idx"))
    except OSError:
        return 0


def entry_header(kind: int, size: int) -> bytes:
    """An entry's type and inflated size: 3 bits of type, then the size 4 bits first
    and 7 bits a byte after, each byte but the last with its top bit set."""
    out = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


_STORED_MOST = 0xFFFF  # the most one stored deflate block holds
SHORT = 512  # a blob or commit shorter than this is stored, not deflated (``deflated``)


def deflated(kind: int, data: bytes) -> bytes:
    """``data`` in zlib's format, as a pack entry holds it: deflated at level 1 (git's
    ``core.looseCompression``), but stored for a tree (mostly object ids, which do
    not compress) and for a blob or a commit shorter than ``SHORT`` bytes.

    Deflating a few hundred bytes costs about 10 microseconds here whatever the
    level, window or memory level (zlib's work per stream: measured from level 1
    down to Huffman-only, from a 512-byte window to 32 KiB, memLevel 1 to 9, and
    with one compressor reused between full flushes), and a short text has few
    repeats to find.  An import's short events (an ``event.json`` of 190 bytes)
    deflate to 0.81 of their size and their commits (about 400 bytes: the message
    repeats the event's text) to 0.52; storing both saves the two deflates of an
    event (the commit's: a 50,000-event import 4.29 to 3.71 s of CPU, medians of
    four alternated rounds) for a bigger pack: at 10,000 short events 4.45 MB with
    both deflated, 4.91 MB with the blobs stored (the earlier rule), 6.61 MB with
    the commits stored too (docs/performance.md).  A longer event (a real answer,
    a tool result) is deflated as before, its commit too.  A stored entry is valid
    zlib, read by git and libgit2 as any other (``git fsck --strict`` reads every
    one); ``git repack`` copies it as it is unless ``-F``.  Its bytes are made here
    (zlib's header, one stored block, the Adler-32 sum), the same that
    ``zlib.compress`` at level 0 writes, without a compressor set up and freed."""
    size = len(data)
    stored = kind == TREE or (kind in _SHORT_STORED and size < SHORT)
    if not stored or size > _STORED_MOST:
        return zlib.compress(data, 0 if stored else 1)
    block = b"\x01" + struct.pack("<HH", size, size ^ 0xFFFF)  # the last block, stored
    return b"\x78\x01" + block + data + struct.pack(">I", zlib.adler32(data))


_SHORT_STORED = frozenset({BLOB, COMMIT})
_STORED_HEAD = struct.Struct("<BHH")  # the last block, stored: its flag, length, ~length


def record(kind: int, data: bytes) -> bytes:
    """A pack entry: its header and ``data`` in zlib's format (``deflated``).  A short
    stored entry, an import's every tree and most of its blobs and commits, is made
    in one step (its header two bytes at most)."""
    size = len(data)
    if size >= SHORT or (kind != TREE and kind not in _SHORT_STORED):
        return entry_header(kind, size) + deflated(kind, data)
    if size < 16:
        head = bytes(((kind << 4) | size,))
    else:
        head = bytes(((kind << 4) | (size & 0x0F) | 0x80, size >> 4))
    stored = _STORED_HEAD.pack(1, size, size ^ 0xFFFF)
    return head + b"\x78\x01" + stored + data + zlib.adler32(data).to_bytes(4, "big")


def _index(
    names: Sequence[bytes], crcs: Iterable[int], offsets: Iterable[int], digest: bytes
) -> bytes:
    """An index of ``names`` (sorted), with their entries' CRC-32s and offsets, as
    ``git index-pack`` writes it: an offset past 2^31 - 1 in the table of 64-bit ones.

    The fan-out table is found by bisecting the sorted names (255 look-ups, not a
    count per object), and the offsets go into the 32-bit table whole when their
    largest fits (an import's pack holds 150,000 objects a chunk)."""
    fanout = [bisect.bisect_left(names, bytes([first + 1])) for first in range(255)]
    small, large = array("I"), array("Q")
    wide = array("Q", offsets)
    if not wide or max(wide) <= _BIG:
        small = array("I", wide)
    else:
        for offset in wide:
            if offset > _BIG:
                small.append(0x80000000 | len(large))
                large.append(offset)
            else:
                small.append(offset)
    crc = array("I", crcs)
    if sys.byteorder == "little":  # the index is big-endian
        for table in (small, large, crc):
            table.byteswap()
    index = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    index += struct.pack(">256I", *fanout, len(names))
    index += b"".join(names)
    index += crc.tobytes() + small.tobytes() + large.tobytes()
    index += digest
    index += hashlib.sha1(index).digest()
    return bytes(index)


class PackFile:
    """One pack file being written: objects appended as they come, then closed and
    indexed (``finish``).  What the index needs is kept as it goes, packed tight: a
    record of 32 bytes an object (its name, its offset and the CRC-32 of its entry,
    big-endian), sorted whole at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # a write each event's few hundred bytes: buffered by the MiB, not git's 8 KiB
        self.file = open(path, "wb", buffering=1 << 20)  # noqa: SIM115 - closed by finish
        self.count = 0
        self.file.write(b"PACK" + struct.pack(">II", 2, 0))  # the count is set at the end
        self._at = 12  # where the next entry begins
        self._records = bytearray()

    def add(self, kind: int, data: bytes, name: bytes | None = None) -> bytes:
        """Append one object (``name``: its raw name, when the caller has it); its raw
        name."""
        if kind not in KINDS:
            raise ValueError(f"not an object type a pack stores whole: {kind}")
        entry = record(kind, data)
        self.file.write(entry)
        if name is None:
            name = object_id(kind, data)
        self._records += _RECORD.pack(name, self._at, zlib.crc32(entry))
        self._at += len(entry)
        self.count += 1
        return name

    def add_event(self, blob: bytes, tree: bytes, commit: bytes) -> bytes:
        """Append a blob, the one-entry tree that names it and the commit that names
        the tree (an event's three objects, ``events.commits.objects``); the commit's
        raw name.  The same entries as three ``add`` calls, in one write: the blob
        and the tree are named by what names them (only the commit is hashed), and
        the per-call work of ``add`` is done once (an import adds 150,000 objects
        for 50,000 events)."""
        blob_record = record(BLOB, blob)
        tree_record = record(TREE, tree)
        commit_record = record(COMMIT, commit)
        self.file.write(blob_record + tree_record + commit_record)
        name = hashlib.sha1(b"commit %d\0" % len(commit) + commit).digest()
        at = self._at
        tree_at = at + len(blob_record)
        commit_at = tree_at + len(tree_record)
        self._records += _THREE_RECORDS.pack(
            tree[-20:],
            at,
            zlib.crc32(blob_record),
            bytes.fromhex(commit[5:45].decode("ascii")),
            tree_at,
            zlib.crc32(tree_record),
            name,
            commit_at,
            zlib.crc32(commit_record),
        )
        self._at = commit_at + len(commit_record)
        self.count += 3
        return name

    def finish(self) -> str:
        """Close the pack, set its object count, write its index; its name (the pack's
        SHA-1, as git names it).

        The index is made here from what was written:
        ``git index-pack`` cost an import a tenth of its time to inflate and hash
        again the objects this writer had just deflated and hashed, and to look each
        up among the store's own.  The same pack indexed by git gives the same bytes
        (``tests/unit/gitstore/test_gitstore_packfile.py``).  An object written
        twice (the same event twice) is indexed twice, as git indexes it."""
        self.file.flush()
        self.file.seek(8)
        self.file.write(struct.pack(">I", self.count))
        self.file.close()
        digest = hashlib.sha1()
        with open(self.path, "rb") as pack:  # the count changed: hash the file again
            for block in iter(lambda: pack.read(1 << 20), b""):
                digest.update(block)
        with open(self.path, "ab") as pack:
            pack.write(digest.digest())
            pack.flush()
            os.fsync(pack.fileno())
        records, self._records = self._records, bytearray()
        index = _sorted_index(records, self.count, self._at <= _BIG, digest.digest())
        with open(self.path.with_suffix(".idx"), "wb") as out:
            out.write(index)
            out.flush()
            os.fsync(out.fileno())
        return digest.hexdigest()


_RECORD = struct.Struct(">20sQI")  # what ``PackFile`` keeps of an entry: name, offset, CRC-32
_THREE_RECORDS = struct.Struct(">" + "20sQI" * 3)


def _sorted_index(records: bytearray, count: int, narrow: bool, digest: bytes) -> bytes:
    """The index of ``count`` entries kept as ``PackFile`` keeps them (``narrow``: every
    offset under 2^31).  The records are sorted as they are, by name and, for an
    object written twice, by offset (as git indexes it); their three columns are
    then taken out a 32-bit word at a time by strided slices of one array (a record
    is 8 words: 5 of name, 2 of offset, 1 of CRC-32), with no Python step per
    object: at 150,000 objects 0.1 s, where a sort by a key and the tables built
    entry by entry took 0.25 s."""
    whole = bytes(records)  # rows of bytes: bytearrays sort three times slower
    del records
    rows = [whole[at : at + 32] for at in range(0, 32 * count, 32)]
    del whole
    rows.sort()
    fanout = [bisect.bisect_left(rows, bytes([first + 1])) for first in range(255)]
    if not narrow:  # a pack past 2 GiB: offsets in the wide table, one by one
        return _index(
            [row[:20] for row in rows],
            [int.from_bytes(row[28:], "big") for row in rows],
            [int.from_bytes(row[20:28], "big") for row in rows],
            digest,
        )
    words = array("I", b"".join(rows))  # the bytes as they are: no word is read as a number
    del rows
    named = array("I", bytes(20 * count))
    for word in range(5):
        named[word::5] = words[word::8]
    tables = named.tobytes() + words[7::8].tobytes() + words[6::8].tobytes()  # CRCs, offsets
    index = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    index += struct.pack(">256I", *fanout, count)
    index += tables
    index += digest
    index += hashlib.sha1(index).digest()
    return bytes(index)
