"""Environment faults: a read-only store, a full disk, a store path that is a file
or names nothing.  Each gets one line naming the fault (never "internal error",
never "another writer"), changes nothing, and read commands keep working on a
store that cannot be written.

Root ignores file modes, so read-only is a read-only bind mount and a full disk
a small tmpfs, both inside a private mount namespace (``unshare -m``); a file
size limit (``prlimit --fsize``, EFBIG) stands for a full disk where mounting
is not allowed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.reliability.harness import JP, RUST, RUST_ID, TRACEBACK, Sandbox

READ_COMMANDS = [
    ["conversation", "ls"],
    ["conversation", "ls", "--archived"],
    ["conversation", "show", RUST_ID],
    ["conversation", "print", RUST_ID],
    ["conversation", "grep", "cargo"],
    ["conversation", "compact", RUST_ID, "--dry-run"],
    ["conversation", "compact", RUST_ID, "--reset=all", "--dry-run"],
    ["--format", "json", "conversation", "show", RUST_ID],
]
WRITE_COMMANDS = [
    ["q", "-i", RUST_ID, "hello"],
    ["q", "--new", "hello"],
    ["conversation", "archive", RUST_ID, "--yes"],
    ["conversation", "fork", RUST_ID],
    ["conversation", "edit", RUST_ID, "--title", "new title"],
    ["conversation", "rm", RUST_ID, "--yes"],
    ["conversation", "compact", RUST_ID],
]


def _namespaces() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return probe.returncode == 0


needs_mounts = pytest.mark.skipif(
    not _namespaces(), reason="no private mount namespace here (unshare -m refused)"
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    box = Sandbox(tmp_path_factory.mktemp("env") / "box")
    box.ok("init")
    box.ok("conversation", "import", "--activate", str(RUST))
    box.ok("conversation", "show", RUST_ID)  # the cache is filled
    return box


@pytest.fixture
def box(template: Sandbox, tmp_path: Path) -> Sandbox:
    return template.copy(tmp_path / "box")


def in_namespace(box: Sandbox, setup: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``jp args`` after the shell commands ``setup`` in a private mount namespace."""
    script = f'{setup} && exec "$@"'
    proc = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", str(JP), *args],
        env=box.env,
        cwd=box.root / "work",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert TRACEBACK not in proc.stdout + proc.stderr, proc.stderr
    return proc


def refused_as(proc: subprocess.CompletedProcess[str], words: str) -> None:
    assert proc.returncode != 0, proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, proc.stderr
    assert words in lines[0], proc.stderr
    assert "internal error" not in proc.stderr and "another writer" not in proc.stderr


# -- read-only ---------------------------------------------------------------------------


@needs_mounts
@pytest.mark.parametrize("args", READ_COMMANDS, ids=" ".join)
def test_read_commands_work_on_a_read_only_store(box: Sandbox, args: list[str]) -> None:
    shutil.rmtree(box.store / "jp")  # no cache either: it is rebuilt nowhere, read from git
    readonly = f"mount --bind -o ro {box.store} {box.store}"
    proc = in_namespace(box, readonly, args)
    assert proc.returncode == 0, proc.stderr
    assert "error" not in proc.stderr


@needs_mounts
def test_read_commands_use_the_cache_of_a_read_only_store(box: Sandbox) -> None:
    readonly = f"mount --bind -o ro {box.store} {box.store}"
    proc = in_namespace(box, readonly, ["--format", "json", "conversation", "ls"])
    assert proc.returncode == 0 and RUST_ID in proc.stdout, proc.stderr


@needs_mounts
@pytest.mark.parametrize("args", WRITE_COMMANDS, ids=" ".join)
def test_writes_to_a_read_only_store_name_the_fault(box: Sandbox, args: list[str]) -> None:
    before = box.refs()
    proc = in_namespace(box, f"mount --bind -o ro {box.store} {box.store}", args)
    refused_as(proc, "read-only file system")
    assert str(box.store) in proc.stderr
    assert box.refs() == before


# -- a full disk -------------------------------------------------------------------------


def _on_tmpfs(box: Sandbox, free_kb: int) -> str:
    """Shell lines: the store copied onto a 4 MB tmpfs left with ``free_kb`` free."""
    mnt = box.root / "mnt"
    mnt.mkdir(exist_ok=True)
    return (
        f"mount -t tmpfs -o size=4m tmpfs {mnt} && cp -a {box.store} {mnt}/store.git && "
        f"(dd if=/dev/zero of={mnt}/fill bs=1k 2>/dev/null; true) && rm -f {mnt}/room && "
        f"truncate -s 0 {mnt}/fill && dd if=/dev/zero of={mnt}/fill bs=1k "
        f"count=$(( $(df -k --output=avail {mnt} | tail -1) - {free_kb} )) 2>/dev/null && "
        f"export JP_STORE={mnt}/store.git"
    )


@needs_mounts
@pytest.mark.parametrize("args", WRITE_COMMANDS, ids=" ".join)
def test_writes_to_a_full_disk_name_the_fault(box: Sandbox, args: list[str]) -> None:
    proc = in_namespace(box, _on_tmpfs(box, 0), args)
    refused_as(proc, "no space left")


@needs_mounts
@pytest.mark.parametrize("free_kb", [4, 8, 12, 16, 24, 32, 48, 64])
def test_a_nearly_full_disk_is_never_another_writer(box: Sandbox, free_kb: int) -> None:
    """Some objects fit, the ref's lock file or reflog may not: whatever fails is
    named as a full disk, and what git shows afterwards is a whole state."""
    check = '; git --git-dir "$JP_STORE" fsck --no-dangling >&2 || echo FSCK-FAILED >&2'
    for args in (["q", "-i", RUST_ID, "hello"], ["conversation", "archive", RUST_ID, "--yes"]):
        script = _on_tmpfs(box, free_kb) + f' && "$@"{check}; exit 0'
        proc = subprocess.run(
            ["unshare", "-m", "sh", "-c", script, "sh", str(JP), *args],
            env=box.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert TRACEBACK not in proc.stderr, proc.stderr
        assert "internal error" not in proc.stderr and "another writer" not in proc.stderr, (
            proc.stderr
        )
        assert "FSCK-FAILED" not in proc.stderr, proc.stderr


def test_a_file_size_limit_is_named_as_a_full_disk(box: Sandbox) -> None:
    if shutil.which("prlimit") is None:
        pytest.skip("no prlimit here")
    before = box.refs()
    for args in WRITE_COMMANDS[:3]:
        proc = subprocess.run(
            ["prlimit", "--fsize=64", str(JP), *args],
            env=box.env,
            cwd=box.root / "work",
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert TRACEBACK not in proc.stderr, proc.stderr
        refused_as(proc, "no space left")
    assert box.refs() == before


# -- the store path ----------------------------------------------------------------------


def test_a_store_path_that_is_a_file(box: Sandbox, tmp_path: Path) -> None:
    a_file = tmp_path / "store-file"
    a_file.write_text("not a repository\n")
    for args in (["conversation", "ls"], ["q", "--new", "hello"], ["init"]):
        proc = box.fail(*args, env={"JP_STORE": str(a_file)})
        assert str(a_file) in proc.stderr
    assert a_file.read_text() == "not a repository\n"


@pytest.mark.parametrize("how", ["JP_STORE", "--store"])
def test_a_missing_store_is_an_error_and_nothing_is_created(
    box: Sandbox, tmp_path: Path, how: str
) -> None:
    missing = tmp_path / "typo" / "stroe.git"
    for args in (["conversation", "ls"], ["q", "--new", "my words"], ["conversation", "new"]):
        if how == "JP_STORE":
            proc = box.fail(*args, env={"JP_STORE": str(missing)})
        else:
            proc = box.fail("--store", str(missing), *args)
        assert str(missing) in proc.stderr and f"jp init {missing}" in proc.stderr
        assert not missing.parent.exists(), "a mistyped store path created folders"
    box.ok("init", str(missing))
    assert (missing / "HEAD").is_file()
    proc = box.run("--store", str(missing), "conversation", "ls")
    assert proc.returncode == 0, proc.stderr


def test_the_default_store_is_created_on_first_use_with_a_note(box: Sandbox) -> None:
    env = {k: v for k, v in box.env.items() if k != "JP_STORE"}
    default = Path(env["XDG_DATA_HOME"]) / "jp" / "store.git"
    assert not default.exists()
    proc = subprocess.run(
        [str(JP), "conversation", "ls"], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert (default / "HEAD").is_file()
    assert f"created the store {default}" in proc.stderr
    again = subprocess.run(
        [str(JP), "conversation", "ls"], env=env, capture_output=True, text=True, timeout=120
    )
    assert "created" not in again.stderr
