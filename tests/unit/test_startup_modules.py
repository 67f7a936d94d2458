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
import sys
from pathlib import Path

import pytest

from gitstore.refs.names import LIVE_PREFIX
from tests.support.sandbox import ROOT, TIMEOUT, TRACEBACK, sealed_env

WRITING = (
    "gitstore.store.packwrite",
    "gitstore.store.streamed",
    "gitstore.store.maintenance",
)
# what a plain read never needs (``gitstore`` itself: only for --help)
READING = (
    "gitstore",
    "gitstore.refs.quarantine",
    "gitstore.refs.packed",
    "gitstore.refs.bulk",
    "gitstore.cache.search",
    "gitstore.cache.listing",
    "tempfile",
)
CLAUDE = ROOT / "tests" / "fixtures" / "sessions" / "claude-code"
PROBE = """
import sys, types
PRELOAD
from porcelain.cli import main
sys.argv = ["jp", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
ran = [n for n in WRITING if type(sys.modules.get(n)) is types.ModuleType] or ["-"]
sys.stderr.write(f"\\nPROBE code={code} loaded={','.join(ran)}\\n")
"""


def loaded(
    env: dict[str, str], *args: str, preload: str = "", among: tuple[str, ...] = WRITING
) -> set[str]:
    """The modules of ``among`` (the writing ones unless given) that ``jp ARGS``
    executed (``preload``: code run before jp)."""
    code = PROBE.replace("PRELOAD", preload).replace("WRITING", repr(among))
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        input="",
    )
    assert TRACEBACK not in proc.stderr, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("PROBE "), proc.stderr
    fields = dict(item.split("=", 1) for item in last.split()[1:])
    assert fields["code"] in ("0", "None"), proc.stderr
    return set(fields["loaded"].split(",")) - {"-"}


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
    eager = "import gitstore.refs.quarantine"
    assert loaded(env, "--help", preload=eager, among=READING) == {
        "gitstore",
        "gitstore.refs.quarantine",
    }


def test_an_unchanged_import_loads_no_writer(env: dict[str, str]) -> None:
    assert loaded(env, "conversation", "import", "--from", "claude-code", str(CLAUDE)) == set()


def test_the_probe_sees_a_writer_loaded_eagerly(env: dict[str, str]) -> None:
    eager = "import gitstore.store.packwrite, gitstore.store.maintenance"
    seen = loaded(env, "conversation", "ls", preload=eager)
    assert seen == {"gitstore.store.packwrite", "gitstore.store.maintenance"}
