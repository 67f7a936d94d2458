"""A command that writes nothing never loads the store's writing half.

The bulk pack writer (``store/packwrite.py``, with ``subprocess``), the
streamed writer and git's housekeeping load at the first write that needs
them: ``jp --help``, ``jp conversation ls`` and an import of session files
that did not change run without them.  The probe runs jp's entry point in a
fresh interpreter and names, after the command, each of those modules that
was executed (a module bound lazily, not yet touched, is not).

Reading spares more than the writer: ``jp --help`` loads no gitstore module at
all (not even the clock's time functions), and ``ls``, ``show`` and ``print``
load neither the quarantine, the packed-refs rebuild nor the bulk ref writer,
and ``show``/``print`` not the cache's listing or search.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitstore.git.refs import LIVE_PREFIX
from tests.support.module_probe import probe
from tests.support.sandbox import ROOT, sealed_env

WRITING = (
    "gitstore.store.packwrite",
    "gitstore.store.streamed",
    "gitstore.store.maintenance",
)
# what a plain read never needs (``gitstore`` itself: only for --help)
READING = (
    "gitstore",
    "gitstore.git.refs.quarantine",
    "gitstore.git.refs.packed",
    "gitstore.git.refs.bulk",
    "gitstore.cache.search",
    "gitstore.cache.listing",
    "tempfile",
)
CLAUDE = ROOT / "tests" / "fixtures" / "sessions" / "claude-code"


def loaded(
    env: dict[str, str], *args: str, preload: str = "", among: tuple[str, ...] = WRITING
) -> set[str]:
    """The modules of ``among`` (the writing ones unless given) that ``jp ARGS``
    executed (``preload``: code run before jp)."""
    found = probe(args, env, ROOT, among, preload=preload)
    assert found.code == 0, found.err
    return found.loaded


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A sealed user whose store holds the Claude Code fixture, imported once."""
    made = sealed_env(tmp_path, tmp_path / "store.git", tmp_path / "config", "T", "t@e.invalid")
    (tmp_path / "home").mkdir()
    assert loaded(made, "init", str(tmp_path / "store.git")) == set()
    first = loaded(made, "conversation", "import", "--from", "claude-code", str(CLAUDE))
    assert "gitstore.store.packwrite" in first  # the first import writes packs
    return made


def test_read_only_commands_load_no_writer(env: dict[str, str]) -> None:
    assert loaded(env, "--help") == set()
    assert loaded(env, "conversation", "ls") == set()


def test_help_loads_no_store_module_and_reads_load_only_what_they_read(
    env: dict[str, str],
) -> None:
    assert loaded(env, "--help", among=READING) == set()
    # the first listing after the bulk import fills the cache (and its search text)
    assert "gitstore.cache.search" in loaded(env, "conversation", "ls", among=READING)
    assert loaded(env, "conversation", "ls", among=READING) == {
        "gitstore",
        "gitstore.cache.listing",
    }
    listed = subprocess.run(
        ["git", "--git-dir", env["JP_STORE"], "for-each-ref", "--format=%(refname)", LIVE_PREFIX],
        capture_output=True,
        text=True,
        check=True,
    )
    cid = listed.stdout.split()[0].rsplit("/", 1)[1]
    loaded(env, "conversation", "use", cid)  # a write (it may load the writer): the active one
    assert loaded(env, "conversation", "show", among=READING) == {"gitstore"}
    assert loaded(env, "conversation", "print", among=READING) == {"gitstore"}


def test_the_probe_sees_a_reading_module_loaded_eagerly(env: dict[str, str]) -> None:
    eager = "import gitstore.git.refs.quarantine"
    assert loaded(env, "--help", preload=eager, among=READING) == {
        "gitstore",
        "gitstore.git.refs.quarantine",
    }


def test_an_unchanged_import_loads_no_writer(env: dict[str, str]) -> None:
    assert loaded(env, "conversation", "import", "--from", "claude-code", str(CLAUDE)) == set()


def test_the_probe_sees_a_writer_loaded_eagerly(env: dict[str, str]) -> None:
    eager = "import gitstore.store.packwrite, gitstore.store.maintenance"
    seen = loaded(env, "conversation", "ls", preload=eager)
    assert seen == {"gitstore.store.packwrite", "gitstore.store.maintenance"}


def test_imports_never_load_libgit2(tmp_path: Path) -> None:
    """Loading pygit2 was a quarter of the instructions of an import of 250 small
    conversations (issue 45): an import's packs, refs, titles, operation record and
    gc check are written and read with git instead, JP folders and sessions alike,
    and the store it leaves is whole."""
    env = sealed_env(tmp_path, tmp_path / "store.git", tmp_path / "config", "T", "t@e.invalid")
    (tmp_path / "home").mkdir()
    libgit2 = ("pygit2",)
    loaded(env, "init", str(tmp_path / "store.git"), among=libgit2)  # init makes it with libgit2
    folders = sorted(str(p) for p in (ROOT / "fixtures" / "conversations").iterdir())
    assert loaded(env, "conversation", "import", *folders, among=libgit2) == set()
    sessions = ("conversation", "import", "--from", "claude-code", str(CLAUDE))
    assert loaded(env, *sessions, among=libgit2) == set()
    git = ["git", "--git-dir", env["JP_STORE"]]
    checked = subprocess.run([*git, "fsck", "--strict"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    titles = subprocess.run([*git, "notes", "--ref=meta", "list"], capture_output=True, text=True)
    assert len(titles.stdout.splitlines()) >= len(folders)
    ops = subprocess.run(
        [*git, "log", "--format=%s", "refs/jp/oplog"], capture_output=True, text=True
    )
    assert [line.split(": ", 1)[1][:27] for line in ops.stdout.splitlines()[:2]] == [
        "jp conversation import --fr",
        "jp conversation import " + folders[0][:4],
    ]


COUNT_GIT = """
import atexit, subprocess
_argvs = []
_popen = subprocess.Popen.__init__
def _init(self, args, *rest, **kw):
    _argvs.append([str(a) for a in args])
    _popen(self, args, *rest, **kw)
subprocess.Popen.__init__ = _init
atexit.register(lambda: open(OUT, "w").write("\\n".join(" ".join(a) for a in _argvs)))
"""


def test_an_import_reads_the_store_through_one_git_process(tmp_path: Path) -> None:
    """An import's titles and its operation record read the store's objects through
    one `git cat-file --batch`, held for the whole command (issue 45: each git
    process is a fixed cost of every import command)."""
    env = sealed_env(tmp_path, tmp_path / "store.git", tmp_path / "config", "T", "t@e.invalid")
    (tmp_path / "home").mkdir()
    loaded(env, "init", str(tmp_path / "store.git"))
    folders = sorted(str(p) for p in (ROOT / "fixtures" / "conversations").iterdir())
    loaded(env, "conversation", "import", folders[0])  # the titles' notes exist: read below
    out = tmp_path / "git-processes"
    count = COUNT_GIT.replace("OUT", repr(str(out)))
    loaded(env, "conversation", "import", *folders[1:], preload=count)
    started = out.read_text().splitlines()
    assert sum(" cat-file " in f" {argv} " for argv in started) == 1, started
    git = ["git", "--git-dir", env["JP_STORE"]]
    titles = subprocess.run([*git, "notes", "--ref=meta", "list"], capture_output=True, text=True)
    assert len(titles.stdout.splitlines()) >= len(folders)
    checked = subprocess.run([*git, "fsck", "--strict"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_an_import_of_folders_runs_without_click(tmp_path: Path) -> None:
    """`jp conversation import FOLDER...` runs early (``porcelain/early/folders.py``):
    click costs more than a small import's own work (issue 45); with an option, or a
    path that is not a folder, the whole command runs and says what it says."""
    env = sealed_env(tmp_path, tmp_path / "store.git", tmp_path / "config", "T", "t@e.invalid")
    (tmp_path / "home").mkdir()
    loaded(env, "init", str(tmp_path / "store.git"))
    folders = sorted(str(p) for p in (ROOT / "fixtures" / "conversations").iterdir())
    early = probe(
        ("conversation", "import", *folders), env, ROOT, ("click",), entry="porcelain.early"
    )
    assert (early.code, early.loaded) == (0, set()), early.err
    assert len(early.out.split()) == len(folders)
    again = probe(
        ("c", "import", "--activate", folders[0]), env, ROOT, ("click",), entry="porcelain.early"
    )
    assert (again.code, again.loaded) == (0, {"click"})
    assert "already in the store" in again.err
    missing = probe(
        ("conversation", "import", str(tmp_path / "none")),
        env,
        ROOT,
        ("click",),
        entry="porcelain.early",
    )
    assert missing.code == 1 and missing.loaded == {"click"}
    assert missing.err.startswith("error: ") and "not a folder" in missing.err
    git = ["git", "--git-dir", env["JP_STORE"]]
    ops = subprocess.run(
        [*git, "log", "--format=%s", "refs/jp/oplog"], capture_output=True, text=True
    )
    assert "jp conversation import " + folders[0] in ops.stdout
    checked = subprocess.run([*git, "fsck", "--strict"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


# what `jp conversation import FOLDER...` never needs: each is a fixed cost of every
# such command (issue 45: twelve commands of 250); the reason beside each
NOT_FOR_FOLDERS = (
    "dataclasses",  # loads inspect, ast, dis and tokenize: named tuples instead
    "inspect",
    "uuid",  # loads platform: os.urandom names what needs a random name
    "platform",
    "random",  # only a retry's sleep after a failed try
)


def test_an_import_of_folders_loads_no_module_it_does_not_need(tmp_path: Path) -> None:
    env = sealed_env(tmp_path, tmp_path / "store.git", tmp_path / "config", "T", "t@e.invalid")
    (tmp_path / "home").mkdir()
    loaded(env, "init", str(tmp_path / "store.git"))
    folders = sorted(str(p) for p in (ROOT / "fixtures" / "conversations").iterdir())
    for some in (folders[:1], folders[1:]):  # into an empty store, then beside a conversation
        found = probe(
            ("conversation", "import", *some), env, ROOT, NOT_FOR_FOLDERS, entry="porcelain.early"
        )
        assert (found.code, found.loaded) == (0, set()), found.err
    seen = probe(("--help",), env, ROOT, NOT_FOR_FOLDERS, preload="import uuid, dataclasses")
    assert seen.loaded == {"uuid", "platform", "dataclasses", "inspect"}  # the probe sees them
