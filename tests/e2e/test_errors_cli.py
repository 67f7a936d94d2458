"""Expected failures: one `error:` line (and a next step), a non-zero exit, no
traceback, and nothing half-written (design section 9)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.e2e.harness import JP, RUST, TRACEBACK, User, write_conversation


def test_usage_errors_exit_2(user: User) -> None:
    for args in (
        ["no-such-command"],
        ["--format", "xml", "conversation", "ls"],
        ["conversation", "fork", "--first", "-1"],
        ["conversation", "compact", "--interactive", "--dry-run"],
        ["conversation", "compact", "--continue", "--abort"],
    ):
        proc = user.fail(*args)
        assert proc.returncode == 2, (args, proc.returncode, proc.stderr)


def test_not_found_and_state_errors_name_a_next_step(user: User) -> None:
    proc = user.fail("conversation", "show", "jp-c1234")
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: no conversation jp-c1234")
    assert "jp conversation ls" in proc.stderr
    proc = user.fail("conversation", "print")
    assert "no active conversation" in proc.stderr and "jp q --new" in proc.stderr
    cid = user.import_(RUST)
    user.ok("conversation", "archive", cid, "--yes")
    for args in (["q", "--id", cid, "UNSENT-WORDS"], ["conversation", "compact", cid]):
        proc = user.fail(*args)
        assert "archived" in proc.stderr and f"jp conversation unarchive {cid}" in proc.stderr
    assert "UNSENT-WORDS" not in user.git("log", "-p", "--all")


def test_bad_stores_are_refused_clearly(user: User, tmp_path: Path) -> None:
    a_file = tmp_path / "store-file"
    a_file.write_text("not a repository")
    proc = user.fail("conversation", "ls", env={"JP_STORE": str(a_file)})
    assert str(a_file) in proc.stderr
    folder = tmp_path / "some-folder"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep me")
    proc = user.fail("conversation", "ls", env={"JP_STORE": str(folder)})
    assert str(folder) in proc.stderr
    assert (folder / "mine.txt").read_text() == "keep me" and len(list(folder.iterdir())) == 1
    reftable = tmp_path / "reftable.git"
    subprocess.run(["git", "init", "-q", "--bare", str(reftable)], check=True, env=user.env)
    for key, value in (("core.repositoryformatversion", "1"), ("extensions.refStorage", "reftable")):
        subprocess.run(["git", "--git-dir", str(reftable), "config", key, value], check=True)
    proc = user.fail("conversation", "ls", env={"JP_STORE": str(reftable)})
    assert "reftable" in proc.stderr and "jp init" in proc.stderr


def test_model_errors(user: User) -> None:
    proc = user.fail("q", "--new", "--model", "foo/bar", "hi", code=3)
    assert "unknown model provider" in proc.stderr and "foo" in proc.stderr
    proc = user.fail("--cfg", "assistant.model.id=foo/bar", "q", "--new", "hi", code=3)
    assert "unknown model provider" in proc.stderr, "a configuration error exits 3, as the others"
    proc = user.fail("q", "--model", "no-slash", "hi")
    assert "provider/name" in proc.stderr
    proc = user.fail("q", "--model", "anthropic/claude-x", "hi there")
    assert "ANTHROPIC_API_KEY" in proc.stderr, "a missing key is named"
    # refused before anything is written: no conversation, no request
    assert user.refs() == {} and "hi there" not in user.git("log", "-p", "--all")


def test_a_closed_pipe_is_not_an_error(user: User, tmp_path: Path) -> None:
    folder = write_conversation(tmp_path / "17800000601-big", 8, tools_every=1, tool_bytes=40_000)
    cid = user.import_(folder)
    proc = subprocess.Popen(
        [str(JP), "conversation", "print", "--style", "full", cid],
        env=user.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"--- turn 1")
    proc.stdout.close()  # the rest (over 300 KB) no longer fits in the pipe
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert TRACEBACK not in err and "internal error" not in err, err


def plant(user: User, cid: str, files: dict[str, str]) -> str:
    """A commit written with plain git whose tree holds ``files``, as ``cid``'s tip."""
    entries = []
    for name, text in files.items():
        blob = user.git("hash-object", "-w", "--stdin", input=text).strip()
        entries.append(f"100644 blob {blob}\t{name}\n")
    tree = user.git("mktree", input="".join(entries)).strip()
    commit = user.git("commit-tree", tree, "-m", "planted", input="").strip()
    user.git("update-ref", f"refs/conversations/{cid}", commit)
    return commit


def test_a_malformed_event_commit_is_a_clear_error(user: User) -> None:
    plant(user, "jp-c5", {"event.json": "{not json\n"})
    plant(user, "jp-c6", {"other.json": "{}\n"})
    for cid in ("jp-c5", "jp-c6"):
        proc = user.run("conversation", "show", cid)
        assert proc.returncode not in (0, 255), proc.stderr
        assert "internal error" not in proc.stderr and cid in proc.stderr, proc.stderr


def test_ls_survives_one_malformed_conversation(user: User) -> None:
    good = user.import_(RUST)
    plant(user, "jp-c5", {"event.json": "{not json\n"})
    proc = user.run("conversation", "ls")
    assert proc.returncode == 0 and good in proc.stdout, proc.stderr


def test_remote_add_of_a_taken_name_says_what_is_wrong(user: User, tmp_path: Path) -> None:
    first, second = tmp_path / "a.git", tmp_path / "b.git"
    for bare in (first, second):
        subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True, env=user.env)
    user.ok("remote", "add", "origin", str(first))
    proc = user.fail("remote", "add", "origin", str(second), code=1)
    assert "sync" not in proc.stderr and "failed" not in proc.stderr, "nothing was synced"
    assert proc.stderr.startswith(f"error: remote origin already exists with URL {first}")
    assert "git remote set-url origin" in proc.stderr
    assert user.git("config", "remote.origin.url").strip() == str(first)
