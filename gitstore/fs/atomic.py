"""Writing a file whole or not at all: a temporary file beside it, then one rename.

Every file jp writes in place (local state, a configuration, an export, JP's
folder) goes through here, so a reader never sees half of one and a crash
leaves the old file or the new one.  The temporary name is unique to the write
(``mkstemp`` in the target's folder, so the rename stays on one file system),
two writers at once leave one whole file, and the temporary is removed when the
write fails.  A disk that fails the write is named as the ``EnvironmentFault``
it is.  Local state's small JSON files (the quarantine's reasons, the journal's
pull count) are read and written here too (``read_json``, ``write_json``).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from gitstore.errors import EnvironmentFault, environment_fault


def write(
    path: Path,
    data: bytes | str,
    durable: bool = False,
    mode: int | None = None,
    unchanged: bool = False,
) -> None:
    """``data`` as ``path``'s whole content (text is UTF-8, written as it is).

    ``durable``: flushed to the disk (file and folder) before this returns;
    ``mode``: the new file's permission bits (else a new file's: 0666 minus the
    umask, never ``mkstemp``'s 0600); ``unchanged``: leave a file that holds ``data``
    already as it is.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if unchanged and path.exists() and path.read_bytes() == raw:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = _new_file(path)
    except OSError as exc:
        raise _fault(exc, path) or exc from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(name, _umasked() if mode is None else mode)
        os.replace(name, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(name)
        fault = _fault(exc, path) if isinstance(exc, OSError) else None
        if fault is not None:
            raise fault from None
        raise
    if durable:
        sync_folder(path.parent)


def _new_file(path: Path, attempts: int = 100) -> tuple[int, str]:
    """A new, empty file beside ``path`` (``.<name>.<random>.tmp``, mode 0600, made with
    ``O_EXCL`` as ``tempfile.mkstemp`` makes it, without loading ``tempfile``, whose
    ``shutil`` and ``random`` cost a short command a tenth of its start)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(attempts):
        name = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def replace(source: Path, target: Path, durable: bool = False) -> None:
    """Move a finished file (written whole by its maker) over ``target`` in one rename."""
    try:
        os.replace(source, target)
    except OSError as exc:
        raise _fault(exc, target) or exc from None
    if durable:
        sync_folder(target.parent)


def sync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename in it) to the disk."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _umasked() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _fault(exc: OSError, path: Path) -> EnvironmentFault | None:
    """The disk fault ``exc`` stands for, its detail the system's own words."""
    fault = environment_fault(exc, str(path))
    if fault is None:
        return None
    return EnvironmentFault(fault.kind, fault.path, exc.strerror or str(exc))


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; empty when it is missing, unreadable or not an
    object (local state: a lost file only costs its hint)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: Any, pretty: bool = False) -> None:
    """``data`` as ``path``'s whole content (``pretty``: indented, sorted, one
    final newline)."""
    text = (
        json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        if pretty
        else json.dumps(data)
    )
    write(path, text)
