"""What every black-box harness shares: a sealed environment and plain git.

A harness runs the installed `jp` (next to the running interpreter) with its
own HOME, XDG folders and store, so nothing of the developer's environment
leaks in except PATH and the locale; it reads the store back with the git
command line.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

JP = Path(sys.executable).parent / "jp"
ROOT = Path(__file__).resolve().parents[2]
OWN_FIXTURES = ROOT / "fixtures" / "conversations"
RUST = OWN_FIXTURES / "17800000101-setting-up-a-rust-cli"

ID = re.compile(r"\bjp-c[0-9]+(?:-[0-9a-z]+)?\b")
TRACEBACK = "Traceback (most recent call last)"
TIMEOUT = 120
KEEP = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
# Not kept: PYTHONDONTWRITEBYTECODE.  `jp` reads its bytecode as an installation does
# (tests/conftest.py compiles it once per run); without it, each of the suite's
# thousands of `jp` processes compiled every module it imports from source.


def sealed_env(
    root: Path,
    store: Path,
    config_dir: Path,
    name: str,
    email: str,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of one sealed user whose folders live under ``root``."""
    env = {k: os.environ[k] for k in KEEP if k in os.environ}
    env.update(
        {
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(config_dir),
            "XDG_DATA_HOME": str(root / "data"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "JP_STORE": str(store),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(root / "home" / ".gitconfig"),
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            "NO_COLOR": "1",
            "TERM": "dumb",
            "EDITOR": "false",
            "VISUAL": "false",
            # no warm model process outlives a test, unless the test asks for one
            # (tests/e2e/warm.py)
            "JP_WARM": "0",
        }
    )
    env.update(extra or {})
    return env


class GitReader:
    """Plain git over a harness's store (``store`` and ``env`` set by the harness)."""

    store: Path
    env: dict[str, str]

    def git(self, *args: str, check: bool = True, input: str | None = None) -> str:
        proc = subprocess.run(
            ["git", "--git-dir", str(self.store), *args],
            env=self.env,
            input=input,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        if check:
            assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
        return proc.stdout

    def refs(self, *prefixes: str) -> dict[str, str]:
        out = self.git("for-each-ref", "--format=%(refname) %(objectname)", *prefixes)
        return dict(line.split(" ", 1) for line in out.splitlines())

    def chain_events(self, tip: str, *, first_parent: bool = False) -> list[dict[str, Any]]:
        """Every event of the chain ending at ``tip``, oldest first: one `git log`, one
        `git cat-file --batch`."""
        walk = ["--first-parent"] if first_parent else []
        trees = self.git("log", *walk, "--reverse", "--format=%T", tip).split()
        proc = subprocess.run(
            ["git", "--git-dir", str(self.store), "cat-file", "--batch"],
            env=self.env,
            input="".join(f"{t}:event.json\n" for t in trees).encode(),
            capture_output=True,
            timeout=TIMEOUT,
            check=True,
        )
        return parse_batch(proc.stdout)


def parse_batch(data: bytes) -> list[dict[str, Any]]:
    """The blobs printed by `git cat-file --batch`, each parsed as JSON."""
    out: list[dict[str, Any]] = []
    pos = 0
    while pos < len(data):
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        assert header[1] == b"blob", header
        size = int(header[2])
        out.append(json.loads(data[end + 1 : end + 1 + size]))
        pos = end + 1 + size + 1
    return out
