"""`jp hooks install|uninstall claude-code|codex`: the import hook in the other
tool's settings, every other setting and hook kept, exactly ours taken back; an
edited hook or a file that does not parse is refused and left byte for byte;
`jp status` says which tools have it."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import JP, User

SESSIONS = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude-code"

THEIRS = {"hooks": [{"type": "command", "command": "notify-send done"}]}
SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "Stop": [THEIRS],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}],
    },
}


def settings_file(user: User) -> Path:
    return Path(user.env["HOME"]) / ".claude" / "settings.json"


def write(path: Path, text: str, mode: int = 0o600) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def status_hooks(user: User) -> dict[str, Any]:
    return {h["tool"]: h for h in user.json("status")["hooks"]}


def test_claude_code_gets_the_hook_and_loses_nothing(user: User) -> None:
    path = settings_file(user)
    write(path, json.dumps(SETTINGS, indent=4))
    assert status_hooks(user)["claude-code"]["installed"] is None
    out = user.json("hooks", "install", "claude-code")
    assert out["changed"] is True and out["file"] == str(path)
    assert out["events"] == ["Stop", "SessionEnd"]
    data = json.loads(path.read_text())
    ours = {"hooks": [{"type": "command", "command": out["command"], "timeout": 60}]}
    assert data["hooks"]["Stop"] == [THEIRS, ours], "theirs first, ours after it"
    assert data["hooks"]["SessionEnd"] == [ours]
    assert "conversation import --from claude-code --quiet && " in out["command"]
    assert f"--store {user.store}" in out["command"], "JP_STORE passed on"
    assert Path(out["command"].split()[0]).is_absolute()
    rest = {**data, "hooks": {k: v for k, v in data["hooks"].items() if k != "SessionEnd"}}
    rest["hooks"]["Stop"] = [THEIRS]
    assert rest == SETTINGS, "every other setting and hook kept"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert status_hooks(user)["claude-code"]["installed"] == "jp"
    assert "claude-code installed" in user.ok("status")

    again = path.read_bytes()
    assert user.json("hooks", "install", "claude-code")["changed"] is False
    assert path.read_bytes() == again, "twice is once"

    assert "Removed" in user.ok("hooks", "uninstall", "claude-code")
    assert json.loads(path.read_text()) == SETTINGS
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert status_hooks(user)["claude-code"]["installed"] is None
    user.fail("hooks", "uninstall", "claude-code")


def test_claude_config_dir_and_a_missing_file(user: User, tmp_path: Path) -> None:
    folder = tmp_path / "claude"
    env = {"CLAUDE_CONFIG_DIR": str(folder)}
    user.ok("hooks", "install", "claude-code", env=env)
    path = folder / "settings.json"
    assert set(json.loads(path.read_text())["hooks"]) == {"Stop", "SessionEnd"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    proc = user.fail("hooks", "install", "claude-code")  # another folder: one hook at a time
    assert "hooks uninstall claude-code" in proc.stderr
    assert not settings_file(user).exists()
    user.ok("hooks", "uninstall", "claude-code")  # the folder it went to, whatever the env
    assert not path.exists(), "the file jp made is gone again"


def test_codex_gets_a_stop_hook_in_hooks_json(user: User, tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    env = {"CODEX_HOME": str(home)}
    path = home / "hooks.json"
    write(path, json.dumps({"hooks": {"Stop": [THEIRS]}}), mode=0o640)
    out = user.ok("hooks", "install", "codex", env=env)
    assert "/hooks" in out, "says Codex asks to trust it"
    stop = json.loads(path.read_text())["hooks"]["Stop"]
    assert stop[0] == THEIRS and "import --from codex --quiet" in stop[1]["hooks"][0]["command"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    user.ok("hooks", "uninstall", "codex", env=env)
    assert json.loads(path.read_text()) == {"hooks": {"Stop": [THEIRS]}}


def test_an_edited_hook_is_refused_and_left(user: User) -> None:
    user.ok("hooks", "install", "claude-code")
    path = settings_file(user)
    data = json.loads(path.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 30
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    proc = user.fail("hooks", "uninstall", "claude-code")
    assert proc.stderr.startswith("error: ") and "changed since jp installed it" in proc.stderr
    assert path.read_bytes() == before


def test_a_hook_removed_by_hand_is_forgotten(user: User) -> None:
    path = settings_file(user)
    write(path, json.dumps(SETTINGS))
    user.ok("hooks", "install", "claude-code")
    path.write_text(json.dumps(SETTINGS))  # the user took it out (or a kill came first)
    assert "no remote to sync with" in user.ok("hooks", "install", "claude-code")
    assert len(json.loads(path.read_text())["hooks"]["Stop"]) == 2, "put back once"
    path.write_text(json.dumps(SETTINGS))
    assert "gone" in user.ok("hooks", "uninstall", "claude-code")
    assert json.loads(path.read_text()) == SETTINGS


def test_the_installed_hook_imports_and_pushes(user: User, tmp_path: Path) -> None:
    home = Path(user.env["HOME"])
    shutil.copytree(SESSIONS, home / ".claude" / "projects")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    user.ok("init")
    user.ok("remote", "add", "origin", str(remote))
    user.ok("hooks", "install", "claude-code")
    stop = json.loads(settings_file(user).read_text())["hooks"]["Stop"]
    # as Claude Code runs it: a shell, in some project's folder, its own environment
    proc = subprocess.run(
        ["sh", "-c", stop[0]["hooks"][0]["command"]], cwd=tmp_path, env=user.env, timeout=120
    )
    assert proc.returncode == 0
    assert user.json("conversation", "ls"), "the session imported"
    refs = subprocess.run(
        ["git", "--git-dir", str(remote), "for-each-ref", "refs/conversations/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert refs.strip(), "and pushed"


def test_another_store_replaces_our_hook_not_adds_one(user: User, tmp_path: Path) -> None:
    user.ok("hooks", "install", "claude-code")
    other = str(tmp_path / "other.git")
    user.ok("hooks", "install", "claude-code", env={"JP_STORE": other})
    stop = json.loads(settings_file(user).read_text())["hooks"]["Stop"]
    assert len(stop) == 1 and other in stop[0]["hooks"][0]["command"]
    user.ok("hooks", "uninstall", "claude-code")
    assert not settings_file(user).exists()


def test_a_hand_written_hook_is_seen(user: User) -> None:
    hand = "jp conversation import --from claude-code --quiet && jp sync >/dev/null 2>&1"
    write(
        settings_file(user),
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": hand}]}]}}),
    )
    assert status_hooks(user)["claude-code"]["installed"] == "by hand"
    assert "another hook that imports" in user.ok("hooks", "install", "claude-code")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"hooks": {', "not valid JSON"),
        ("[1, 2]", "does not hold a JSON object"),
        ('{"hooks": ["Stop"]}', "hooks is not a table"),
        ('{"hooks": {"Stop": {"x": 1}}}', "hooks.Stop is not a list"),
        ("\x1b]0;hi\x07{", "not valid JSON"),
        ("\xff\xfe", "cannot read"),
    ],
)
def test_a_file_that_does_not_parse_is_left_as_it_was(user: User, text: str, says: str) -> None:
    path = settings_file(user)
    path.parent.mkdir(parents=True)
    raw = text.encode("latin-1")
    path.write_bytes(raw)
    for args in (("hooks", "install", "claude-code"), ("hooks", "uninstall", "claude-code")):
        proc = user.fail(*args)
        assert proc.stderr.startswith("error: ") and "\x1b" not in proc.stderr, proc.stderr
    assert says in user.fail("hooks", "install", "claude-code").stderr
    assert path.read_bytes() == raw
    found = status_hooks(user)["claude-code"]
    assert found["installed"] is None and says in found["problem"]
    assert "claude-code unknown" in user.ok("status")


def test_a_linked_settings_file_stays_linked(user: User, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    write(real, json.dumps(SETTINGS))
    path = settings_file(user)
    path.parent.mkdir(parents=True)
    path.symlink_to(real)
    user.ok("hooks", "install", "claude-code")
    assert path.is_symlink() and "SessionEnd" in json.loads(real.read_text())["hooks"]
    user.ok("hooks", "uninstall", "claude-code")
    assert path.is_symlink() and json.loads(real.read_text()) == SETTINGS


def test_a_fifo_is_refused_without_waiting(user: User) -> None:
    path = settings_file(user)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    proc = user.fail("hooks", "install", "claude-code")
    assert "is not a regular file" in proc.stderr
    assert "not a regular file" in status_hooks(user)["claude-code"]["problem"]


def test_a_hook_of_an_older_form_is_replaced_not_doubled(user: User) -> None:
    user.ok("hooks", "install", "claude-code")
    path, record = settings_file(user), user.config_dir / "jp" / "hooks-installed.json"
    data, mine = json.loads(path.read_text()), json.loads(record.read_text())
    old = {"hooks": [{"type": "command", "command": mine["claude-code"]["command"]}]}
    for event in ("Stop", "SessionEnd"):  # as an earlier jp wrote it: no timeout
        data["hooks"][event] = [old]
    mine["claude-code"]["group"] = old
    path.write_text(json.dumps(data))
    record.write_text(json.dumps(mine))
    assert user.json("hooks", "install", "claude-code")["changed"] is True
    stop = json.loads(path.read_text())["hooks"]["Stop"]
    assert len(stop) == 1 and stop[0]["hooks"][0]["timeout"] == 60


def two_at_once(user: User, command: str, records: str) -> dict[str, Any]:
    """``jp COMMAND install`` for both tools at once, first while the test holds the
    lock of tools' files (both wait for it), then three times racing each other:
    each install's entry and record survive the other's.  jp's records after it."""
    import fcntl
    import time

    lock = user.config_file.parent / "tool-files.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)

    def start(tool: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(JP), command, "install", tool], env=user.env, cwd=user.root,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        procs = [start("claude-code"), start("codex")]
        time.sleep(1.5)
        assert [p.poll() for p in procs] == [None, None], "they wait for the lock"
    for _ in range(4):
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
        recorded = json.loads((user.config_file.parent / records).read_text())
        assert sorted(recorded) == ["claude-code", "codex"], recorded
        procs = [start("claude-code"), start("codex")]  # again, racing each other
    for proc in procs:
        proc.communicate(timeout=60)
    return dict(recorded)


def test_two_installs_at_once_keep_both(user: User) -> None:
    recorded = two_at_once(user, "hooks", "hooks-installed.json")
    claude = json.loads(settings_file(user).read_text())["hooks"]
    codex = json.loads((Path(user.env["HOME"]) / ".codex" / "hooks.json").read_text())
    assert recorded["claude-code"]["command"] in json.dumps(claude["Stop"])
    assert recorded["codex"]["command"] in json.dumps(codex["hooks"]["Stop"])
    user.ok("hooks", "uninstall", "claude-code")
    user.ok("hooks", "uninstall", "codex")  # each record was kept: both taken back
