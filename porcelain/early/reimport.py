"""An unchanged session re-import, answered from the import summary.

`jp conversation import --from claude-code|codex [PATH...] [--quiet] [-F json]`
is what the tools' hooks run after every session; most of the time no file
changed.  When the summary the last import of the same roots left
(``porcelain/domain/importsummary.py``) still holds, this module prints what
the whole command would print ("N files: 0 imported, 0 updated, N unchanged"
or its JSON) without loading click, the configuration layers or the store.

It holds when every one of these is true, checked in this order:

- the command line is one this parser knows whole (anything else: ``--since``,
  ``-c``, ``--cfg``, a repeated option, ``--``: the whole command);
- no testing hook is set (``JP_FAULT``, ``JP_TEST_CLOCK``, ``JP_TEST_SEED``);
- the store is found as the whole command finds it, its refs are plain files,
  and a well-formed summary for these roots is there;
- the user's and the store's configuration files hold the bytes they held;
- the files found are the ones recorded, in the same order;
- each file is exactly as long as the bytes the import read, and those bytes
  hash to the SHA-1 it recorded (the whole file is read: see docs/sessions.md);
- the conversation refs' fingerprint is the one taken after that import wrote.

Whatever cannot be decided falls through to the whole command, which gives
the right answer (and the error, if there is one).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from gitstore import conversation_refs_state, ids
from porcelain.domain import importsummary, sessionreport
from porcelain.domain.places import choose_store
from porcelain.domain.sessionfiles import Found, find_files, open_session
from porcelain.early import HOOKS
from porcelain.errors import UserError
from porcelain.render.output import Output

TOOLS = ("claude-code", "codex")
COMMANDS = ("conversation", "c", "conversations")
_HEX = frozenset("0123456789abcdef")


class Request(NamedTuple):
    tool: str
    paths: tuple[Path, ...]
    quiet: bool
    fmt: str
    store: str | None


class Unchanged(NamedTuple):
    """One file's outcome, as ``porcelain.app.sessions`` gives it for an unchanged file."""

    found: Found
    cid: str
    records: int
    action: str = "unchanged"
    new_records: int = 0
    skipped: tuple[()] = ()
    more_skipped: int = 0
    pending: bool = False
    branches: int = 0


def answer(argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> int | None:
    """Print the whole command's answer and return 0; None: run the whole command."""
    if any(environ.get(name) for name in HOOKS):
        return None
    request = parse(argv)
    if request is None:
        return None
    output = Output(request.fmt)
    try:
        done = unchanged(request, environ, Path.cwd())
    except Exception:  # anything unforeseen: the whole command decides, and says why
        if environ.get("JP_DEBUG"):
            raise
        return None
    if done is None:
        return None
    if not request.quiet and not output.json and len(done) > 1 and output.is_terminal():
        return None  # the whole command draws its progress there
    text = None if request.quiet else sessionreport.summary(request.tool, done)
    try:
        output.emit(sessionreport.result(request.tool, done), text)
    except BrokenPipeError:
        pass  # as the whole command: a reader that left is not an error
    return 0


def parse(argv: Sequence[str]) -> Request | None:
    """The import's arguments, or None for anything this module does not know whole.

    Global options taking a value may stand anywhere (``cli.hoist_globals``)."""
    words: list[str] = []
    values: dict[str, str] = {}
    quiet = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg or not _utf8(arg):
            return None
        name, eq, value = arg.partition("=")
        if name in ("--store", "--format", "--from") or arg == "-F":
            if not eq:
                if i + 1 >= len(argv):
                    return None
                i, value = i + 1, argv[i + 1]
            key = "-F" if name == "--format" else name
            if key in values or (key == "--from" and len(words) < 2):
                return None
            values[key] = value
        elif arg in ("-q", "--quiet") and len(words) >= 2 and not quiet:
            quiet = True
        elif arg in ("-y", "--yes") and not words:
            pass  # answers confirmations; an import asks none
        elif arg.startswith("-"):
            return None
        else:
            words.append(arg)
        i += 1
    tool, fmt = values.get("--from"), values.get("-F", "text")
    if len(words) < 2 or words[0] not in COMMANDS or words[1] != "import" or tool not in TOOLS:
        return None
    if fmt not in ("text", "json") or values.get("--store") == "":
        return None
    return Request(str(tool), tuple(Path(w) for w in words[2:]), quiet, fmt, values.get("--store"))


def _utf8(arg: str) -> bool:
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False  # the whole command refuses it
    return True


def unchanged(request: Request, environ: Mapping[str, str], cwd: Path) -> list[Unchanged] | None:
    """Each file's unchanged outcome, if the summary still holds for all of them."""
    path, _ = choose_store(request.store, environ, cwd)
    refs = conversation_refs_state(path)
    if refs is None:
        return None
    gitdir = refs[0]
    roots = importsummary.roots_of(request.tool, request.paths)
    summary = _read(importsummary.summary_path(gitdir, request.tool, roots))
    if summary is None or summary.get("tool") != request.tool:
        return None
    if summary.get("config") != importsummary.config_mark(environ, gitdir):
        return None
    refused: list[str] = []
    deeper: list[Path] = []
    try:
        files = find_files(request.tool, request.paths, refused, deeper)
    except UserError:
        return None  # the whole command says why
    if refused or deeper:
        return None  # the whole command names them
    entries = summary.get("files")
    if not isinstance(entries, list) or len(entries) != len(files):
        return None
    done = []
    for found, entry in zip(files, entries, strict=True):
        kept = _entry(entry)
        if kept is None or not _same_file(found, kept):
            return None
        done.append(Unchanged(found, kept["id"], kept["records"]))
    after = conversation_refs_state(path)  # read last: a ref moved meanwhile changes it
    if after is None or after[1] != summary.get("refs"):
        return None
    return done


def _read(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(importsummary.MAX_BYTES + 1)
        if len(raw) > importsummary.MAX_BYTES:
            return None
        value = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or value.get("version") != importsummary.VERSION:
        return None
    return value


def _entry(entry: Any) -> dict[str, Any] | None:
    """A recorded file, if each field has the type and form it must have."""
    if not isinstance(entry, dict):
        return None
    for key in ("path", "rel", "sha1", "id", "tip"):
        if not isinstance(entry.get(key), str):
            return None
    for key in ("size", "records"):
        if type(entry.get(key)) is not int or entry[key] < 0:
            return None
    if not ids.is_valid(entry["id"]) or not _hex(entry["sha1"], 40) or not _hex(entry["tip"], 40):
        return None
    return entry


def _hex(text: str, length: int) -> bool:
    return len(text) == length and set(text) <= _HEX


def _same_file(found: Found, entry: dict[str, Any]) -> bool:
    """Whether ``found`` is the recorded file, holding the recorded bytes and nothing more."""
    if entry["rel"] != found.rel or entry["path"] != str(found.path.resolve()):
        return False
    try:
        with open_session(found.path) as handle:
            if os.fstat(handle.fileno()).st_size != entry["size"]:
                return False
            if importsummary.prefix_sha1(handle, entry["size"]) != entry["sha1"]:
                return False
            return handle.read(1) == b""
    except OSError:
        return False
