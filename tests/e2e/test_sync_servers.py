"""Sync against real servers on loopback (tests/support/servers/): two machines
pushing at once, protocol v2, and a server that refuses, drops or asks for a
password: one clear line, never a prompt nobody can answer."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from tests.support.sandbox import JP
from tests.support.servers.base import HINT, Dropper, free_port
from tests.support.servers.fixtures import Remote, Servers, every_remote
from tests.support.servers.http import CREDENTIALS, HttpServer
from tests.support.servers.sshd import SshServer
from tests.support.sync_machine import Machine, remote_refs
from tests.support.terminal import Terminal

DROPPED = ("Connection closed", "Connection reset", "Empty reply", "Recv failure")
FAST = 60  # seconds: a failure that takes longer than this is waiting for something


def failed_line(
    proc: subprocess.CompletedProcess[str], remote: str = "origin", hint: bool = False
) -> str:
    """The one line a failed sync prints (and with ``hint``, the hint below it)."""
    assert proc.returncode != 0, proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == (2 if hint else 1), proc.stderr
    assert lines[0].startswith(f"error: sync with {remote} failed: "), proc.stderr
    if hint:
        assert lines[1].startswith("off a terminal git and ssh do not ask"), proc.stderr
    return lines[0]


def run_fast(machine: Machine, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(JP), *args],
        env=machine.env,
        cwd=machine.root,
        text=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=FAST,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@every_remote
def test_two_machines_pushing_at_once_lose_nothing(
    pair: tuple[Machine, Machine, Path],
) -> None:
    laptop, desktop, remote = pair
    shared = laptop.new("shared start")
    laptop.ok("push")
    desktop.ok("pull")
    desktop.ok("conversation", "use", shared)
    mine = {m: [m.new(f"{n} from {m.root.name}") for n in range(3)] for m in (laptop, desktop)}
    for machine in (laptop, desktop):
        machine.ok("conversation", "use", shared)
        machine.ok("q", f"{machine.root.name.upper()} ON THE SHARED ONE")
    results: dict[str, subprocess.CompletedProcess[str]] = {}
    threads = [
        threading.Thread(target=lambda m=m: results.__setitem__(m.root.name, m.run("push")))
        for m in (laptop, desktop)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name, proc in results.items():
        assert proc.returncode == 0, f"{name}: {proc.stdout}\n{proc.stderr}"
    for machine in (laptop, desktop):
        machine.ok("sync")
    laptop.ok("pull")
    assert laptop.refs() == desktop.refs()
    every = laptop.ids()
    assert every >= {shared, *mine[laptop], *mine[desktop]} and len(every) == 8, "one fork"
    texts = "".join(laptop.transcript(cid) for cid in every)
    assert "LAPTOP ON THE SHARED ONE" in texts and "DESKTOP ON THE SHARED ONE" in texts
    assert {f"refs/conversations/{cid}" for cid in every} <= set(remote_refs(remote))


@pytest.mark.parametrize("remote_kind", ["ssh", "http"], indirect=True)
def test_the_servers_speak_protocol_v2(pair: tuple[Machine, Machine, Path], tmp_path: Path) -> None:
    laptop, desktop, _ = pair
    laptop.new("hello")
    laptop.ok("push")
    trace = tmp_path / "packets"
    desktop.env["GIT_TRACE_PACKET"] = str(trace)
    desktop.ok("pull")
    assert "< version 2" in trace.read_text(errors="replace")


def test_a_refused_ssh_key_is_one_line(tmp_path: Path, git_servers: Servers) -> None:
    server = git_servers.get("ssh")
    assert isinstance(server, SshServer)
    stranger = tmp_path / "stranger_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    command = server.ssh_command().replace(str(server.root / "client_ed25519"), str(stranger))
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    machine = Machine(tmp_path / "m", server.url(remote), {"GIT_SSH_COMMAND": command})
    line = failed_line(run_fast(machine, "pull"), hint=True)
    assert "Permission denied (publickey)" in line, line


@pytest.mark.parametrize("scheme", ["ssh", "http"])
def test_a_server_that_drops_or_is_not_there_is_one_line(tmp_path: Path, scheme: str) -> None:
    if scheme == "ssh" and shutil.which("ssh") is None:
        pytest.skip(f"no ssh client; to run these tests: {HINT}")
    with Dropper() as dropper:
        machine = Machine(tmp_path / "m", f"{scheme}://127.0.0.1:{dropper.port}/remote.git")
        for verb in ("pull", "push"):
            line = failed_line(run_fast(machine, verb))
            assert any(word in line for word in DROPPED), line
    machine.ok("remote", "add", "closed", f"{scheme}://127.0.0.1:{free_port()}/remote.git")
    line = failed_line(run_fast(machine, "pull", "closed"), "closed")
    assert "Connection refused" in line or "Couldn't connect" in line, line


@pytest.fixture
def private(git_servers: Servers, tmp_path: Path) -> tuple[Machine, Remote]:
    """A machine whose remote asks for a password (and has no credential helper)."""
    server = git_servers.get("http")
    assert isinstance(server, HttpServer)
    path = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(path)], check=True)
    remote = Remote("http", path, server.private_url(path))
    machine = Machine(tmp_path / "m", remote.url)
    machine.new("behind a password")
    return machine, remote


def test_a_password_nobody_can_type_is_one_line_not_a_prompt(
    private: tuple[Machine, Remote],
) -> None:
    machine, remote = private
    line = failed_line(run_fast(machine, "push"), hint=True)
    assert "terminal prompts disabled" in line, line
    # on a terminal, but with stdin not on it (a script's `jp push < /dev/null`):
    # nobody can answer, so git must not ask on /dev/tty either
    term = Terminal(["sh", "-c", f"exec {JP} push </dev/null"], machine.env, machine.root)
    code, shown = term.finish(timeout=FAST)
    assert code != 0 and b"terminal prompts disabled" in shown, shown
    assert not remote_refs(remote.path)


def test_on_a_terminal_git_asks_for_the_password(
    private: tuple[Machine, Remote], tmp_path: Path
) -> None:
    """Someone can answer: git asks, once with a credential helper that keeps the
    answer (each git run would ask again without one)."""
    machine, remote = private
    helper = f"store --file={tmp_path / 'credentials'}"
    gitconfig = machine.env["GIT_CONFIG_GLOBAL"]
    Path(gitconfig).parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "config", "--file", gitconfig, "credential.helper", helper], check=True)
    user, password = CREDENTIALS
    term = Terminal([str(JP), "push"], machine.env, machine.root)
    term.expect(b"Username for", timeout=FAST)
    term.send(user + "\n")
    term.expect(b"Password for", timeout=FAST)
    term.send(password + "\n")
    code, shown = term.finish(timeout=FAST)
    assert code == 0 and shown.count(b"Username for") == 1, shown
    assert remote_refs(remote.path)
    assert run_fast(machine, "pull").returncode == 0, "the helper answers from now on"
