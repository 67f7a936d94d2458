"""Git over SSH: Debian's OpenSSH server on a free loopback port, with its own host
key, one throwaway client key and its own configuration (no PAM, no passwords,
only that key, ``GIT_PROTOCOL`` accepted so protocol v2 works).

The client side is the environment a test gives git: ``GIT_SSH_COMMAND`` with
the key, a known-hosts file that holds this server's key (so host checking stays
strict) and ``BatchMode`` (a refused key fails at once, never prompts)."""

from __future__ import annotations

import getpass
import os
import shlex
import subprocess
from pathlib import Path

from tests.support.servers.base import (
    LOOPBACK,
    Group,
    ServerUnavailable,
    free_port,
    program,
    server_gitconfig,
)

CONFIG = """\
ListenAddress {host}
Port {port}
HostKey {root}/host_ed25519
PidFile {root}/sshd.pid
AuthorizedKeysFile {root}/authorized_keys
AllowUsers {user}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
StrictModes no
AcceptEnv GIT_PROTOCOL
SetEnv GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL={root}/server.gitconfig
PermitTTY no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
PrintMotd no
MaxStartups 100
MaxSessions 100
LogLevel ERROR
"""


def _keygen(path: Path) -> str:
    subprocess.run(
        [program("ssh-keygen"), "-q", "-t", "ed25519", "-N", "", "-C", "jp-tests", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path.with_suffix(".pub").read_text().strip()


class SshServer:
    kind = "ssh"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.user = getpass.getuser()
        self.port = 0
        self.group = Group(root / "sshd.log")

    def start(self) -> SshServer:
        sshd = program("sshd")
        program("ssh")
        self.root.mkdir(parents=True, exist_ok=True)
        host_key = _keygen(self.root / "host_ed25519")
        (self.root / "authorized_keys").write_text(_keygen(self.root / "client_ed25519") + "\n")
        server_gitconfig(self.root / "server.gitconfig")
        if os.geteuid() == 0:
            # sshd started by root needs its privilege separation folder
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        for _ in range(5):  # another worker may take the free port first
            self.port = free_port()
            config = self.root / "sshd_config"
            config.write_text(
                CONFIG.format(host=LOOPBACK, port=self.port, root=self.root, user=self.user)
            )
            self.group.spawn([sshd, "-D", "-e", "-f", str(config)])
            try:
                self.group.wait_for(self.port, "sshd")
                break
            except ServerUnavailable:
                self.group.stop()
        else:
            raise ServerUnavailable(f"sshd would not start: {self.group.tail()}")
        kind, key = host_key.split()[:2]
        (self.root / "known_hosts").write_text(f"[{LOOPBACK}]:{self.port} {kind} {key}\n")
        return self

    def stop(self) -> None:
        self.group.stop()

    def url(self, path: Path) -> str:
        return f"ssh://{self.user}@{LOOPBACK}:{self.port}{path.resolve()}"

    def ssh_command(self) -> str:
        """The ``GIT_SSH_COMMAND`` of a client with the throwaway key and nothing of the
        machine's own ssh setup (``-F /dev/null``)."""
        words = [
            "ssh",
            "-F",
            "/dev/null",
            "-i",
            str(self.root / "client_ed25519"),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "IdentityAgent=none",
            "-o",
            f"UserKnownHostsFile={self.root / 'known_hosts'}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "LogLevel=ERROR",
        ]
        return " ".join(shlex.quote(w) for w in words)

    def env(self) -> dict[str, str]:
        return {"GIT_SSH_COMMAND": self.ssh_command()}
