"""The environment every test runs in: sealed from the developer's.

Nothing a developer exports or keeps in their home can change a result: the
variables that reach jp, git, the anthropic SDK or the terminal are removed
(``ANTHROPIC_*``, ``OPENAI_*``, ``GIT_*``, ``JP_*``, ``XDG_*``, editors,
pagers, colours, proxies, the terminal's size and time zone), ``HOME`` is a
temporary folder of its own for each test, and git, the command line and
libgit2 alike, reads no system configuration and a throwaway global one
(``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL``, libgit2's search path), with
a fixed author and committer.  Tests that need a variable set it themselves
(``monkeypatch.setenv``, or the environment a harness gives its subprocess).

The `jp` processes of the suite read bytecode, as an installed `jp` does: the
packages are compiled once when the run starts, and an inherited
``PYTHONDONTWRITEBYTECODE`` is dropped (with it, every one of the suite's
thousands of `jp` processes compiled each module it imports from source).

The seal is applied once when pytest starts (for what is read at import time,
and for libgit2, which reads ``HOME`` when it is loaded) and again before each
test, so a test that changed ``os.environ`` leaves nothing to the next.
"""

from __future__ import annotations

import compileall
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# the remotes sync is tested against (path, ssh, http): tests/support/servers/
from tests.support.servers.fixtures import bare_remote, git_servers, remote_kind  # noqa: F401

PREFIXES = ("ANTHROPIC_", "OPENAI_", "GIT_", "JP_", "XDG_")
NAMES = frozenset(
    {
        "EDITOR",
        "VISUAL",
        "PAGER",
        "LESS",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "COLORTERM",
        "TERM",
        "COLUMNS",
        "LINES",
        "TZ",
        "EMAIL",  # git's fallback for the author's address
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "SSH_AUTH_SOCK",
        "SSH_ASKPASS",
        "GNUPGHOME",
    }
)
NAME = "Tess Ter"
EMAIL = "tess@example.invalid"
GITCONFIG = f"[user]\n\tname = {NAME}\n\temail = {EMAIL}\n[init]\n\tdefaultBranch = main\n"

_SESSION: Path | None = None  # the folder of the seal applied at start-up


def leaky(name: str) -> bool:
    """Whether a developer's variable ``name`` could change what a test sees."""
    upper = name.upper()
    return upper.startswith(PREFIXES) or upper in NAMES


def sealed(home: Path) -> dict[str, str]:
    """The variables every test starts with, for a home folder ``home``."""
    return {
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_AUTHOR_NAME": NAME,
        "GIT_AUTHOR_EMAIL": EMAIL,
        "GIT_COMMITTER_NAME": NAME,
        "GIT_COMMITTER_EMAIL": EMAIL,
        "TERM": "dumb",
        "TZ": "UTC",
    }


def make_home(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(GITCONFIG)
    return home


def _libgit2_reads(home: Path, system: Path) -> None:
    """Point libgit2's configuration search path at ``home`` (global, XDG) and an empty
    ``system`` folder: it read ``HOME`` once, when it was loaded, and ignores
    ``GIT_CONFIG_NOSYSTEM``/``GIT_CONFIG_GLOBAL``."""
    import pygit2

    paths = pygit2.settings.search_path
    paths[pygit2.GIT_CONFIG_LEVEL_SYSTEM] = str(system)
    paths[pygit2.GIT_CONFIG_LEVEL_GLOBAL] = str(home)
    paths[pygit2.GIT_CONFIG_LEVEL_XDG] = str(home / ".config" / "git")


def _compile(root: Path) -> None:
    """Bytecode for jp's packages, once per run (the controller, before any worker):
    py_compile writes it whatever ``sys.dont_write_bytecode`` says."""
    for package in ("gitstore", "porcelain"):
        compileall.compile_dir(root / package, quiet=2)


def pytest_configure(config: pytest.Config) -> None:
    global _SESSION
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if not hasattr(config, "workerinput"):  # the controller, or a run without workers
        _compile(Path(__file__).resolve().parents[1])
    _SESSION = Path(tempfile.mkdtemp(prefix="jp-tests-"))
    for name in [n for n in os.environ if leaky(n)]:
        del os.environ[name]
    (_SESSION / "system").mkdir()
    home = make_home(_SESSION / "home")
    os.environ.update(sealed(home))
    time.tzset()  # TZ=UTC for time.localtime as well
    _libgit2_reads(home, _SESSION / "system")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """`--dist loadscope` with the longest modules spread over workers (tests/support/spread.py)."""
    from tests.support.spread import scheduler  # lazy: imports xdist, run only under it

    return scheduler(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SESSION is not None:
        shutil.rmtree(_SESSION, ignore_errors=True)


@pytest.fixture(autouse=True)
def _sealed_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """Each test: the seal again, with a home of its own."""
    for name in [n for n in os.environ if leaky(n)]:
        monkeypatch.delenv(name)
    home = make_home(tmp_path_factory.mktemp("home"))
    for name, value in sealed(home).items():
        monkeypatch.setenv(name, value)
    assert _SESSION is not None
    _libgit2_reads(home, _SESSION / "system")
    yield home
    _libgit2_reads(_SESSION / "home", _SESSION / "system")
