"""`jp pull` with nothing to do, answered from files (``gitstore.sync.pull_quick``).

Only the plainest command line qualifies: ``jp [--store PATH] [-F FORMAT] pull
[-v] [REMOTE]`` (the global options anywhere, as ``hoist_globals`` allows), no
``--full``, no ``-c``/``--cfg``, no testing hook, a store named by ``--store``
or ``JP_STORE`` or jp's default one (a project store takes the whole path: its
owner is checked there), ``git`` on the ``PATH`` (without it the pull fails
with the line that says jp needs git).  A configuration file, when there is
one, is loaded as the command loads it, so that a broken one fails the same
way.  The output is the full pull's for a pull that did nothing: ``Already up
to date with REMOTE.``, or ``[]`` with ``-F json``; like it, no operation is
recorded (a pull that moves no ref records none).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from porcelain.early import HOOKS

_VALUED = {"--store": "store", "-F": "fmt", "--format": "fmt"}
_DOUBT_ENV = (
    *HOOKS,
    "GIT_DIR",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
)


def parse(argv: Sequence[str]) -> dict[str, str] | None:
    """``store``, ``fmt`` and ``remote`` of a plain pull command line; None for any other."""
    out: dict[str, str] = {"fmt": "text"}
    seen_pull = False
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, eq, value = arg.partition("=")
        if name in _VALUED and (eq or args):
            key = _VALUED[name]
            if key in out and key != "fmt" or (eq and name == "-F"):
                return None
            out[key] = value if eq else args.pop(0)
        elif arg == "pull" and not seen_pull:
            seen_pull = True
        elif seen_pull and arg in ("-v", "--verbose"):
            continue
        elif seen_pull and not arg.startswith("-") and "remote" not in out:
            out["remote"] = arg
        else:
            return None
    if not seen_pull or out["fmt"] not in ("text", "json"):
        return None
    return out


def answer(argv: Sequence[str], environ: Mapping[str, str]) -> int | None:
    """0 after printing what a pull with nothing to do prints; None: run the pull."""
    line = parse(argv)
    if line is None or any(environ.get(k) for k in _DOUBT_ENV) or not _has_git(environ):
        return None
    gitdir = _store(line.get("store") or environ.get("JP_STORE") or None, environ)
    if gitdir is None or not _config_loads(gitdir, environ):
        return None
    # lazy: only a pull that may be a no-op reads the remote's files
    from gitstore import syncing

    found = syncing.nothing_to_pull(gitdir, line.get("remote"), _git_configs(environ), os.geteuid())
    if found is None:
        return None
    text = "[]" if line["fmt"] == "json" else f"Already up to date with {found[0]}."
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # as porcelain.cli.main: a reader that left is no failure
        pass
    return 0


def _has_git(environ: Mapping[str, str]) -> bool:
    """``shutil.which("git")`` on the command's ``PATH``, as the pull finds it."""
    for folder in environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or ".", "git")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return True
    return False


def _store(named: str | None, environ: Mapping[str, str]) -> Path | None:
    """The store's git directory as ``App.chosen_store`` finds it, when it exists and
    is not a project's; None otherwise."""
    if named is not None:
        path = Path(named).expanduser()
    else:
        for folder in [Path.cwd(), *Path.cwd().parents]:
            dot = folder / ".git"
            if os.path.lexists(dot) or (folder / "HEAD").is_file():
                return None  # maybe a project store: found, and its owner checked, there
        home = environ.get("HOME")
        data = environ.get("XDG_DATA_HOME") or (f"{home}/.local/share" if home else "")
        if not data:
            return None
        path = Path(data) / "jp" / "store.git"
    return path if path.is_dir() else None


def _config_loads(gitdir: Path, environ: Mapping[str, str]) -> bool:
    """Whether jp's configuration loads as the pull would load it, and says nothing."""
    home = environ.get("HOME", "")
    xdg = environ.get("XDG_CONFIG_HOME", "")
    user = Path(xdg) / "jp" / "config.toml" if xdg else Path(home) / ".config/jp/config.toml"
    if not home and not xdg:
        return False
    layer = gitdir / "jp" / "config.toml"  # the store's own layer
    if not user.exists() and not layer.exists():
        return True
    # lazy: only a configuration file that exists needs the configuration's modules
    from porcelain.config import load_config

    try:
        config = load_config(environ=environ, store_config=layer, files=[], overrides=[])
    except Exception:  # the pull itself names what is wrong
        return False
    return not config.ignored


def _git_configs(environ: Mapping[str, str]) -> list[Path]:
    """The git config files beside the store's own that git reads."""
    home = environ.get("HOME", "")
    out = []
    if environ.get("GIT_CONFIG_GLOBAL"):
        out.append(Path(environ["GIT_CONFIG_GLOBAL"]))
    else:
        xdg = environ.get("XDG_CONFIG_HOME") or f"{home}/.config"
        out += [Path(home) / ".gitconfig", Path(xdg) / "git" / "config"]
    out.append(Path(environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))  # read or not
    return out
