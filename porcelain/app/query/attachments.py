"""`jp q -a PATH|GLOB|-` and `--attach-cmd CMD`: what a query attaches.

An attachment is read once, when the query runs, and recorded in the
request event (``attachments``: kind, source, content), so the history says
exactly what the model was shown and a later turn sends the same bytes.
Everything read here is untrusted data:

- only UTF-8 text, or an image or PDF told by its first bytes
  (``porcelain/domain/media.py``), is taken; anything else is refused;
- a file is read only when it is a regular file inside the folder it was
  named in: a link that leads out of that folder (``NOTES.md ->
  ~/.ssh/id_ed25519``) is skipped by a glob (and said) and refused when
  named; devices, FIFOs and sockets are refused;
- each attachment is bounded (``MAX_BYTES`` of text, ``MAX_MEDIA_BYTES`` of
  media), and so is their sum (``MAX_TOTAL``, ``MAX_MEDIA_TOTAL``), checked
  as they are read; a glob names at most ``MAX_FILES`` files;
- a command runs as ``attach_cmd.py`` says.

Nothing here prints: what was skipped comes back in ``Collected.notes``.
"""

from __future__ import annotations

import glob
import os
import stat
import sys
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from porcelain.app.query.attach_cmd import run_command
from porcelain.domain.escaping import untrusted_field
from porcelain.domain.media import describe, media_attachment, sniff
from porcelain.errors import UserError

KiB = 1024
MiB = 1024 * KiB
MAX_BYTES = 512 * KiB
MAX_TOTAL = 2 * MiB
MAX_MEDIA_BYTES = 3 * MiB + 768 * KiB  # 5 MiB once in base64, the most a provider takes
MAX_MEDIA_TOTAL = 5 * MiB
MAX_FILES = 100
_GLOB_CHARS = set("*?[")


@dataclass
class Collected:
    """The attachments of a query, and one line per file a glob skipped."""

    attachments: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    text_bytes: int = 0
    media_bytes: int = 0

    def add(self, kind: str, source: str, raw: bytes, what: str) -> None:
        media = sniff(raw)
        if media is None:
            content = _decode(raw, what)
            self.text_bytes += len(raw)
            self.attachments.append({"kind": kind, "source": source, "content": content})
        else:
            _bound_media(raw, what, media)
            self.media_bytes += len(raw)
            self.attachments.append(media_attachment(kind, source, media, raw))
        _check_totals(self)


def collect(
    paths: tuple[str, ...],
    commands: tuple[str, ...],
    stdin: BinaryIO | None = None,
    secrets: frozenset[str] = frozenset(),
) -> Collected:
    """Every attachment of a query, in the order given (files, then commands).

    ``secrets``: the environment variables holding providers' keys, which no
    attached command sees."""
    found = Collected()
    for path in paths:
        if path == "-":
            found.add("stdin", "-", read_stdin(stdin), "standard input")
        else:
            for name in _expand(path, found.notes):
                found.add("file", name, _read_file(name), untrusted_field(name))
    for command in commands:
        found.add("command", command, run_command(command, secrets), _output_of(command))
    return found


def _output_of(command: str) -> str:
    return f"the output of {untrusted_field(command)}"


def _check_totals(found: Collected) -> None:
    if found.text_bytes > MAX_TOTAL:
        raise UserError(
            f"the attachments hold more than {MAX_TOTAL // KiB} KiB of text, the most "
            "that goes with one query",
            "attach fewer or smaller files",
        )
    if found.media_bytes > MAX_MEDIA_TOTAL:
        raise UserError(
            f"the attached images and documents hold more than {MAX_MEDIA_TOTAL // MiB} MiB, "
            "the most that goes with one query",
            "attach fewer or smaller ones",
        )


def _bound_media(raw: bytes, what: str, media: str) -> None:
    if len(raw) > MAX_MEDIA_BYTES:
        raise UserError(
            f"{what} is {describe(media)} larger than {MAX_MEDIA_BYTES // KiB} KiB, "
            "the most one attachment holds",
            "attach a smaller or scaled-down copy",
        )


def _decode(raw: bytes, what: str, limit: int = MAX_BYTES) -> str:
    if len(raw) > limit:
        hint = (
            "pipe a part of it: `cmd | head -c 100000 | jp q ...`"
            if what == "standard input"
            else "attach a part of it (for example with --attach-cmd 'head -c 100000 FILE')"
        )
        raise UserError(
            f"{what} is larger than {limit // KiB} KiB, the most one attachment holds", hint
        )
    if b"\0" in raw:
        raise UserError(
            f"{what} is not text (it holds NUL bytes) nor an image or PDF",
            "attach text files, images or PDFs",
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{what} is not UTF-8 text", "attach text files only") from None


# -- files and globs ---------------------------------------------------------------


def _glob_root(pattern: str) -> str:
    """The folder a glob is taken in: its leading components without glob characters."""
    parts = pattern.split(os.sep)
    fixed: list[str] = []
    for part in parts[:-1]:
        if _GLOB_CHARS & set(part):
            break
        fixed.append(part)
    if not fixed:
        return "."
    return os.sep.join(fixed) or os.sep


def _inside(path: str, folder: str) -> bool:
    """True when ``path``, every link followed, stays inside ``folder`` (resolved)."""
    real, root = os.path.realpath(path), os.path.realpath(folder)
    try:
        return os.path.commonpath([real, root]) == root
    except ValueError:
        return False


def _expand(path: str, notes: list[str]) -> list[str]:
    if os.path.lexists(path) or not _GLOB_CHARS & set(path):
        return [path]
    root = _glob_root(path)
    names: list[str] = []
    skipped: list[str] = []
    for name in sorted(glob.iglob(path, recursive=True)):
        if os.path.isdir(name):
            continue
        if not _inside(name, root):
            skipped.append(
                f"skipped {untrusted_field(name)}: a link to outside {untrusted_field(root)}"
            )
        elif not os.path.isfile(name):
            skipped.append(f"skipped {untrusted_field(name)}: not a regular file")
        else:
            names.append(name)
        if len(names) > MAX_FILES:
            raise UserError(
                f"{untrusted_field(path)} matches more than {MAX_FILES} files; at most "
                f"{MAX_FILES} are attached to one query",
                "narrow the pattern",
            )
    if not names:
        why = f" ({'; '.join(skipped[:3])})" if skipped else ""
        raise UserError(
            f"no file to attach matches {untrusted_field(path)}{why}", "check the pattern (-a)"
        )
    notes.extend(skipped)
    return names


def _open(path: str) -> int:
    shown = untrusted_field(path)
    folder = os.path.dirname(path) or "."
    if not _inside(path, folder):
        target = untrusted_field(os.path.realpath(path))
        raise UserError(
            f"{shown} is a link to {target}, outside its folder; jp does not follow it",
            f"attach the file by its own name if you mean it: -a {target}",
        )
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(os.path.realpath(path), flags)
    except FileNotFoundError:
        raise UserError(f"no such file: {shown}", "check the path given to -a") from None
    except IsADirectoryError:
        raise UserError(
            f"{shown} is a directory", f"attach its files with a glob: -a '{shown}/*'"
        ) from None
    except OSError as exc:
        raise UserError(f"cannot read {shown}: {exc.strerror}") from None


def _read_file(path: str) -> bytes:
    shown = untrusted_field(path)
    fd = _open(path)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UserError(
                f"{shown} is a directory", f"attach its files with a glob: -a '{shown}/*'"
            )
        if not stat.S_ISREG(info.st_mode):
            raise UserError(
                f"{shown} is not a regular file (a device, FIFO or socket)",
                "pipe what it gives into jp instead: `cmd | jp q -a - QUESTION`",
            )
        with os.fdopen(fd, "rb", closefd=False) as stream:
            return stream.read(max(MAX_BYTES, MAX_MEDIA_BYTES) + 1)
    except OSError as exc:
        raise UserError(f"cannot read {shown}: {exc.strerror}") from None
    finally:
        os.close(fd)


def stdin_text() -> str:
    """Standard input as the question's text (``git log | jp q``): UTF-8, bounded."""
    raw = sys.stdin.buffer.read(MAX_TOTAL + 1)
    return _decode(raw, "standard input", MAX_TOTAL)


def read_stdin(stdin: BinaryIO | None = None) -> bytes:
    """Standard input, bounded (refused when it is a terminal)."""
    source = stdin if stdin is not None else sys.stdin.buffer
    if getattr(source, "isatty", lambda: False)():
        raise UserError(
            "-a - attaches standard input, which is a terminal",
            "pipe the text in: `cmd | jp q -a - QUESTION`",
        )
    return source.read(max(MAX_BYTES, MAX_MEDIA_BYTES) + 1)
