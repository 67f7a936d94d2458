"""`jp completion SHELL`: scripts that parse, that the shell runs, and replies
that untrusted titles cannot break."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.harness import JP, NO_MARKERS, RUST, User


def bash_completions(user: User, script: Path, line: list[str]) -> list[str]:
    """What bash's COMPREPLY holds after completing the last word of ``line``."""
    words = " ".join(json.dumps(w) for w in line)
    program = (
        f"PATH={json.dumps(str(JP.parent))}:$PATH; source {json.dumps(str(script))}; "
        f"COMP_WORDS=({words}); COMP_CWORD={len(line) - 1}; _jp_complete; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    proc = subprocess.run(
        ["bash", "--norc", "-c", program], env=user.env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return [ln for ln in proc.stdout.splitlines() if ln]


def ask(user: User, shell: str, *words: str) -> list[str]:
    return user.ok("completion", shell, "--complete", "--", *words).splitlines()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_script_parses_in_its_shell(user: User, shell: str) -> None:
    out = user.ok("completion", shell)
    assert "jp completion" in out and "complete" in out
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    script = user.root / f"jp.{shell}"
    script.write_text(out)
    check = subprocess.run([shell, "-n", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_ids_keys_and_choices(user: User, tmp_path: Path) -> None:
    rust = user.import_(RUST)
    plain = user.import_(NO_MARKERS)
    script = tmp_path / "jp.bash"
    script.write_text(user.ok("completion", "bash"))
    assert "conversation" in bash_completions(user, script, ["jp", "con"])
    assert bash_completions(user, script, ["jp", "conversation", "sho"]) == ["show"]
    ids = bash_completions(user, script, ["jp", "c", "show", ""])
    assert {rust, plain, "active", "recent"} <= set(ids)
    assert bash_completions(user, script, ["jp", "c", "show", "178000001"]) == [
        "17800000102",
        "17800000101",
    ], "bare digits complete to bare digits, newest first"
    assert bash_completions(user, script, ["jp", "c", "use", "c1780000010"]) == [
        "c17800000102",
        "c17800000101",
    ]
    assert bash_completions(user, script, ["jp", "config", "get", "assistant.model.i"]) == [
        "assistant.model.id"
    ]
    assert bash_completions(user, script, ["jp", "c", "ls", "--sort", "t"]) == ["turns", "title"]
    assert "--pinned" in bash_completions(user, script, ["jp", "c", "ls", "--p"])
    assert "offline/jp" in bash_completions(user, script, ["jp", "q", "-m", ""])
    assert "-" in bash_completions(user, script, ["jp", "c", "use", ""])


def test_titles_describe_ids_and_hostile_ones_are_made_harmless(user: User) -> None:
    rust = user.import_(RUST)
    plain = user.import_(NO_MARKERS)
    hostile = "evil\x1b]0;PWN\x07\ttab\nnew line: $(touch /tmp/jp-pwned) `id`"
    user.ok("conversation", "edit", plain, "--title", hostile)
    fish = ask(user, "fish", "c", "show", "")
    assert f"{rust}\tSetting up a Rust CLI" in fish
    (line,) = [ln for ln in fish if ln.startswith(plain)]
    value, about = line.split("\t")
    assert value == plain and "\x1b" not in about and "\x07" not in about
    assert "\\x1b]0;PWN\\x07" in about
    zsh = ask(user, "zsh", "c", "show", "")
    assert f"{rust}:Setting up a Rust CLI" in zsh
    assert all("\x1b" not in ln and "\t" not in ln for ln in zsh)
    assert ask(user, "bash", "c", "show", "jp-c") == [plain, rust], "bash takes values only"
    assert not Path("/tmp/jp-pwned").exists()


def test_remotes_and_a_missing_store_complete_quietly(user: User, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    user.ok("remote", "add", "origin", str(remote))
    assert ask(user, "bash", "pull", "") == ["origin"]
    assert ask(user, "bash", "remote", "remove", "or") == ["origin"]
    proc = user.run(
        "--store",
        str(tmp_path / "nowhere.git"),
        "completion",
        "bash",
        "--complete",
        "--",
        "c",
        "show",
        "",
    )
    assert proc.returncode == 0 and "active" in proc.stdout and "error" not in proc.stderr


def test_install_writes_where_each_shell_looks(user: User) -> None:
    home = user.root / "home"
    for shell, where in (
        ("bash", user.root / "data" / "bash-completion" / "completions" / "jp"),
        ("zsh", home / ".zfunc" / "_jp"),
        ("fish", user.root / "config" / "fish" / "completions" / "jp.fish"),
    ):
        env = {
            "HOME": str(home),
            "XDG_DATA_HOME": str(user.root / "data"),
            "XDG_CONFIG_HOME": str(user.root / "config"),
        }
        out = user.ok("completion", shell, "--install", env=env)
        assert str(where) in out, out
        assert where.read_text() == user.ok("completion", shell)


def install_env(user: User) -> tuple[dict[str, str], Path]:
    env = {"HOME": str(user.root / "home"), "XDG_DATA_HOME": str(user.root / "data")}
    return env, user.root / "data" / "bash-completion" / "completions" / "jp"


def test_install_never_writes_through_a_link(user: User, tmp_path: Path) -> None:
    env, where = install_env(user)
    where.parent.mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_text("PRECIOUS\n")
    (where.parent / "jp.tmp").symlink_to(victim)  # the old fixed temporary name
    where.symlink_to(victim)
    proc = user.run("completion", "bash", "--install", env=env)
    assert proc.returncode == 1 and proc.stderr.startswith("error: "), proc.stderr
    assert "jp did not write it" in proc.stderr and "--force" in proc.stderr
    assert victim.read_text() == "PRECIOUS\n" and where.is_symlink()
    out = user.ok("completion", "bash", "--install", "--force", env=env)
    assert "Wrote" in out
    assert victim.read_text() == "PRECIOUS\n", "the link's target is never written"
    assert not where.is_symlink() and where.read_text() == user.ok("completion", "bash")
    assert (where.parent / "jp.bak").is_symlink(), "the replaced link is kept"
    assert sorted(p.name for p in where.parent.iterdir()) == ["jp", "jp.bak", "jp.tmp"]


def test_install_keeps_a_file_it_did_not_write_and_updates_its_own(user: User) -> None:
    env, where = install_env(user)
    where.parent.mkdir(parents=True)
    where.write_text("complete -F _my_own_jp jp  # the user's own\n")
    proc = user.run("completion", "bash", "--install", env=env)
    assert proc.returncode == 1 and "nothing changed" in proc.stderr, proc.stderr
    assert "_my_own_jp" in where.read_text()
    script = user.ok("completion", "bash")
    where.write_text(script.replace("_jp_complete", "_jp_complete_old"))  # an older jp's
    assert "Replaced" in user.ok("completion", "bash", "--install", env=env)
    assert where.read_text() == script
    assert "nothing changed" in user.ok("completion", "bash", "--install", env=env)
    assert sorted(p.name for p in where.parent.iterdir()) == ["jp"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_a_cfg_value_completes_as_a_value_not_a_command(user: User, tmp_path: Path) -> None:
    script = tmp_path / "jp.bash"
    script.write_text(user.ok("completion", "bash"))
    # bash splits `--cfg assistant.model.id=` at the `=`, as it does when a person types it
    after = bash_completions(user, script, ["jp", "--cfg", "assistant.model.id", "=", ""])
    assert "offline/jp" in after and "conversation" not in after, after
    switch = ["jp", "--cfg", 'conversation.tools."*".enable', "=", ""]
    assert bash_completions(user, script, switch) == ["true", "false"]
    later = ["jp", "--cfg", "assistant.model.id", "=", "offline/jp", "conversation", "sho"]
    assert bash_completions(user, script, later) == ["show"], "the words after it still parse"
    assert ask(user, "zsh", "--cfg", "assistant.model.id=offline/")[0].startswith(
        "assistant.model.id=offline/jp"
    )
