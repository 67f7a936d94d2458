"""The sealed test environment of tests/conftest.py: what a developer exports or
keeps in their home never reaches a test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EMAIL, NAME, leaky

ROOT = Path(__file__).resolve().parents[2]
LEAK = "DEVELOPER-LEAK"


def hostile(home: Path) -> dict[str, str]:
    """A developer's environment at its worst: a key, a store, git settings that
    would change or break every commit, and a configuration naming a real model."""
    (home / "xdg" / "jp").mkdir(parents=True)
    (home / "xdg" / "jp" / "config.toml").write_text(
        '[assistant.model]\nid = "anthropic/claude-sonnet-4-5"\n'
    )
    (home / ".gitconfig").write_text(
        f"[user]\n\tname = {LEAK}\n\temail = leak@example.invalid\n"
        f"[init]\n\tdefaultBranch = {LEAK}\n[core]\n\thooksPath = /{LEAK}\n"
        "[commit]\n\tgpgsign = true\n"
    )
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "xdg"),
        "ANTHROPIC_API_KEY": f"sk-ant-{LEAK}",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "OPENAI_API_KEY": LEAK,
        "JP_STORE": f"/{LEAK}/store.git",
        "JP_DEBUG": "1",
        "GIT_AUTHOR_NAME": LEAK,
        "GIT_COMMITTER_EMAIL": f"{LEAK}@example.invalid",
        "GIT_DIR": f"/{LEAK}",
        "EDITOR": LEAK,
        "PAGER": LEAK,
        "TZ": "Pacific/Kiritimati",
        "COLUMNS": "7",
        "https_proxy": f"http://{LEAK}:1",
    }


def test_a_developers_environment_reaches_no_test(tmp_path: Path) -> None:
    env = {**os.environ, **hostile(tmp_path)}
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider"),
            f"--basetemp={tmp_path / 'inner'}",  # else it sweeps old runs' folders of /tmp
            "tests/support/seal_probe.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout, proc.stdout


def test_each_test_starts_sealed(_sealed_environment: Path) -> None:
    assert os.environ["HOME"] == str(_sealed_environment)
    assert (_sealed_environment / ".gitconfig").read_text().count(NAME) == 1
    assert os.environ["GIT_CONFIG_GLOBAL"] == str(_sealed_environment / ".gitconfig")
    assert os.environ["GIT_CONFIG_NOSYSTEM"] == "1"
    assert (os.environ["GIT_AUTHOR_EMAIL"], os.environ["TZ"]) == (EMAIL, "UTC")
    set_here = {"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "TERM", "TZ"}
    set_here |= {f"GIT_{r}_{f}" for r in ("AUTHOR", "COMMITTER") for f in ("NAME", "EMAIL")}
    assert {n for n in os.environ if leaky(n)} == set_here


@pytest.mark.parametrize("round", [1, 2])
def test_what_a_test_sets_is_gone_for_the_next(round: int) -> None:
    assert "JP_STORE" not in os.environ and "ANTHROPIC_API_KEY" not in os.environ
    os.environ["JP_STORE"] = "/set/by/a/careless/test"  # no monkeypatch: the seal undoes it
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-careless"
