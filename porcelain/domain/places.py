"""Where jp's own files are: the store (``--store``, ``JP_STORE``, a project
repository, the XDG data folder) and the user's configuration file.

Pure functions of the environment they are given, shared by the full command
line and by the answers given before it loads (``porcelain/early``).
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from pathlib import Path

from porcelain.errors import ConfigError, UserError


def default_store_path(environ: Mapping[str, str]) -> Path:
    data = environ.get("XDG_DATA_HOME") or str(
        Path(environ.get("HOME", "~")).expanduser() / ".local" / "share"
    )
    return Path(data) / "jp" / "store.git"


def find_project_store(start: Path) -> Path | None:
    """The nearest enclosing git repository in which `jp init --here` was run."""
    for folder in [start, *start.parents]:
        dot = folder / ".git"
        if dot.exists():
            return dot if dot.is_dir() else folder
        if (folder / "HEAD").is_file() and (folder / "refs").is_dir() and _marked(folder):
            return folder
    return None


def _marked(folder: Path) -> bool:
    # lazy: only a folder that looks like a git directory needs the store's check (start-up)
    from gitstore import is_store

    return is_store(folder)


def check_owner(store: Path, environ: Mapping[str, str], uid: int | None = None) -> None:
    """Refuse a store found by walking up that another user owns, as git's
    ``safe.directory`` does: its git directory, and the folder holding ``.git``,
    must be the caller's (root run through sudo: the sudo user's too).

    A store planted in a shared parent (``/tmp``, a team folder) is otherwise
    read as the caller's own.  A store named with ``--store`` or ``JP_STORE``
    is the caller's choice and is not checked."""
    me = os.geteuid() if uid is None else uid
    allowed = {me}
    sudo = environ.get("SUDO_UID", "")
    if me == 0 and sudo.isdigit():
        allowed.add(int(sudo))
    for path in (store, store.parent) if store.name == ".git" else (store,):
        try:
            owner = path.stat().st_uid
        except OSError:
            continue  # gone or unreadable: opening it names the fault
        if owner not in allowed:
            raise UserError(
                f"the store {path} is owned by another user (uid {owner}, you are uid {me}); "
                "jp does not read a store it found in a folder someone else owns",
                f"name it if you trust it: `jp --store {store} ...` (or JP_STORE)",
            )


def choose_store(
    option: str | None, environ: Mapping[str, str], cwd: Path
) -> tuple[Path, str | None]:
    """The store's path, and who named it (``--store``, ``JP_STORE``; None: jp's default)."""
    if option:
        return Path(option).expanduser(), "--store"
    if environ.get("JP_STORE"):
        return Path(environ["JP_STORE"]).expanduser(), "JP_STORE"
    project = find_project_store(cwd)
    if project is not None and _marked(project):
        check_owner(project, environ)
        return project, "the project repository"
    return default_store_path(environ), None


def user_config_path(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/jp/config.toml``, else ``~/.config/jp/config.toml``."""
    xdg = environ.get("XDG_CONFIG_HOME", "")
    if xdg and Path(xdg).is_absolute():  # the XDG spec says to ignore relative paths
        return Path(xdg) / "jp" / "config.toml"
    return _home(environ) / ".config" / "jp" / "config.toml"


def _home(environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME", "")
    if home:
        return Path(home)
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        raise ConfigError(
            "cannot find the user's config directory: HOME is not set",
            "set HOME or XDG_CONFIG_HOME",
        )
