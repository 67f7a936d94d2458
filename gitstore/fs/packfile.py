"""A git pack of a few whole objects, and its index, written without libgit2.

A write's shelter pack (``keep.Kept.shelter``) holds the handful of objects one
write made, whose bytes jp already holds: libgit2's pack builder would read
each back from the object database, search for deltas among them and index
the pack it made, a few milliseconds a write (most of a fork's time in a store
of thousands of titled conversations, whose notes tree is one large tree).
Here every object is stored whole, deflated at the fastest level, and the
index is made from what was written: pack version 2, index version 2, SHA-1
object names, as ``git index-pack`` would index the same pack.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

# a pack entry's type (as pygit2's ``ObjectType`` numbers them)
KINDS = frozenset({1, 2, 3, 4})  # commit, tree, blob, tag
_BIG = 0x7FFFFFFF  # an offset past this needs the index's 64-bit table: not written here


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


def object_id(kind: int, data: bytes) -> bytes:
    """The SHA-1 name git gives an object of ``kind`` holding ``data``."""
    word = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}[kind]
    return hashlib.sha1(b"%s %d\0" % (word, len(data)) + data).digest()


def pack_bytes(objects: Sequence[tuple[int, bytes]]) -> tuple[bytes, bytes]:
    """The pack of ``objects`` (type, bytes) and its index; refuses what they cannot hold."""
    pack = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    entries: dict[bytes, tuple[int, int]] = {}  # name -> (offset, CRC-32 of the entry)
    for kind, data in objects:
        if kind not in KINDS:
            raise ValueError(f"not an object type a pack stores whole: {kind}")
        name = object_id(kind, data)
        if name in entries:
            continue
        record = entry_header(kind, len(data)) + zlib.compress(data, 1)
        entries[name] = (len(pack), zlib.crc32(record))
        pack += record
        if len(pack) > _BIG:
            raise ValueError("a pack this large needs 64-bit offsets")
    if len(entries) != len(objects):  # the header counted every object once
        pack[8:12] = struct.pack(">I", len(entries))
    digest = hashlib.sha1(pack).digest()
    pack += digest
    return bytes(pack), index_bytes(entries, digest)


def index_bytes(entries: dict[bytes, tuple[int, int]], pack_digest: bytes) -> bytes:
    """Index version 2: fan-out table, sorted names, CRC-32s, offsets, both checksums."""
    names = sorted(entries)
    counts = [0] * 256
    for name in names:
        counts[name[0]] += 1
    index = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    total = 0
    for count in counts:
        total += count
        index += struct.pack(">I", total)
    index += b"".join(names)
    index += b"".join(struct.pack(">I", entries[n][1]) for n in names)
    index += b"".join(struct.pack(">I", entries[n][0]) for n in names)
    index += pack_digest
    index += hashlib.sha1(index).digest()
    return bytes(index)


def write(objects: Sequence[tuple[int, bytes]], folder: Path) -> Path:
    """Write ``pack-<name>.pack`` and its ``.idx`` into ``folder``; the pack's path."""
    pack, index = pack_bytes(objects)
    stem = folder / f"pack-{pack[-20:].hex()}"
    for suffix, data in ((".pack", pack), (".idx", index)):
        fd = os.open(stem.with_suffix(suffix), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    return stem.with_suffix(".pack")
