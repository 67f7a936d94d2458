"""Fixtures of the remotes sync is tested against: a bare path remote, git over
SSH and smart HTTP, each server started once per test session (per xdist worker)
on loopback, and only when a test asks for it.

A test that should run against every kind of remote takes ``remote_kind`` and
is marked ``@every_remote``; without the mark ``remote_kind`` is ``path``.
``bare_remote`` is an empty bare repository on the chosen server: its ``path``
on this machine (for plain git checks), the ``url`` jp is given, and the ``env``
a client needs (already set in ``os.environ`` for in-process tests)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.servers.base import ServerUnavailable
from tests.support.servers.http import HttpServer
from tests.support.servers.sshd import SshServer

KINDS = ("path", "ssh", "http")
every_remote = pytest.mark.parametrize("remote_kind", KINDS, indirect=True)


@dataclass(frozen=True)
class Remote:
    kind: str
    path: Path
    url: str
    env: dict[str, str] = field(default_factory=dict)


class Servers:
    """The session's servers, each started on first use; one that cannot start is
    remembered, so every test that needs it skips with the same line."""

    def __init__(self, root: Path, project: Path) -> None:
        self.root = root
        self.project = project
        self.running: dict[str, SshServer | HttpServer] = {}
        self.failed: dict[str, str] = {}

    def get(self, kind: str) -> SshServer | HttpServer:
        if kind in self.failed:
            pytest.skip(self.failed[kind])
        if kind not in self.running:
            server = (
                SshServer(self.root / "ssh")
                if kind == "ssh"
                else HttpServer(self.root / "http", self.project)
            )
            try:
                self.running[kind] = server.start()
            except (ServerUnavailable, OSError, subprocess.CalledProcessError) as exc:
                server.stop()
                self.failed[kind] = f"no {kind} server: {exc}"
                pytest.skip(self.failed[kind])
        return self.running[kind]

    def stop(self) -> None:
        for server in self.running.values():
            server.stop()
        self.running.clear()


@pytest.fixture(scope="session")
def git_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    servers = Servers(tmp_path_factory.mktemp("servers"), tmp_path_factory.getbasetemp())
    try:
        yield servers
    finally:
        servers.stop()


@pytest.fixture
def remote_kind(request: pytest.FixtureRequest) -> str:
    kind = str(getattr(request, "param", "path"))
    assert kind in KINDS, kind
    return kind


def bare_repo(path: Path) -> Path:
    subprocess.run(["git", "init", "--bare", "-q", str(path)], check=True)
    return path


@pytest.fixture
def bare_remote(
    remote_kind: str,
    git_servers: Servers,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Remote:
    """An empty bare repository served as ``remote_kind``."""
    path = bare_repo(tmp_path / "remote.git")
    if remote_kind == "path":
        return Remote("path", path, str(path))
    server = git_servers.get(remote_kind)
    remote = Remote(remote_kind, path, server.url(path), server.env())
    for name, value in remote.env.items():
        monkeypatch.setenv(name, value)
    return remote
