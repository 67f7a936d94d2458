"""Pulls from a real SSH server (tests/support/servers/) that goes away part way:
the pull fails with the transport's reason and remembers nothing, so the next
one brings everything; and the environment of a git that must never prompt."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

from gitstore.errors import SyncError
from gitstore.git import command, refs
from gitstore.git.refs import quarantine
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import remotes
from gitstore.sync.here import Here
from gitstore.sync.pull import Syncer
from gitstore.sync.push import push
from gitstore.sync.transport import choose
from tests.support.servers.fixtures import Remote
from tests.unit.sync.hostile import Hostile, refused, request

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="plain git is the transport")
CID = "jp-c17000000300"

WRAPPER = """#!/bin/sh
# the test's ssh: connections after the first {limit} are dropped
count="$(cat {counter} 2>/dev/null || echo 0)"
count=$((count + 1))
echo "$count" > {counter}
if [ "$count" -gt "$(cat {limit})" ]; then
    echo "Connection closed by 127.0.0.1 port 22" >&2
    exit 255
fi
exec {real} "$@"
"""


@pytest.mark.parametrize("remote_kind", ["ssh"], indirect=True)
def test_a_server_gone_during_a_pull_refuses_nothing(
    bare_remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init_bare(tmp_path / "mine")
    store = Store(tmp_path / "mine")
    remotes.add(store.repo, "origin", bare_remote.url)
    syncer = Syncer(Here.of(store), "origin", choose(store.repo, GIT))
    start = {"type": "conversation_start", "timestamp": "2026-01-05T09:00:00Z"}
    store.log.create(CID, [{**start, "conversation_id": CID}, request("mine")], None, "test")
    store.notes.set_meta(CID, {"title": "mine"}, "test")
    push(syncer)
    # the remote: one new event (good) and a notes ref git's checks refuse (bad), so
    # the pull's first fetch fails and the refs are fetched one part at a time
    bad = Hostile(bare_remote.path)
    bad.ref(refs.live(CID), bad.event(request("arrives"), bad.tip(refs.live(CID))))
    note = bad.blob('{"k": "title", "m": "x", "t": 5, "v": "dup"}\n')
    anchor = store.notes.anchor(CID)
    sub = bad.tree([f"100644 blob {note}\t{anchor[2:]}"])
    dup = bad.tree([f"100644 blob {note}\t{anchor[:2]}", f"040000 tree {sub}\t{anchor[:2]}"])
    bad.ref("refs/notes/meta", bad.commit(dup, bad.tip("refs/notes/meta")))
    # ... and the server goes away after the journal's fetch, the first fetch and the
    # listing
    limit = tmp_path / "limit"
    limit.write_text("3\n")
    wrapper = tmp_path / "bin" / "ssh"  # named ssh: git passes the port as to OpenSSH
    wrapper.parent.mkdir()
    real = bare_remote.env["GIT_SSH_COMMAND"]
    wrapper.write_text(WRAPPER.format(limit=limit, counter=tmp_path / "count", real=real))
    wrapper.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", shlex.quote(str(wrapper)))
    with pytest.raises(SyncError, match="Connection closed"):
        syncer.pull()
    assert not quarantine.recorded(store.gitdir, "origin"), "nothing refused for a lost server"
    assert store.log.load(CID).events[-1]["content"] == "mine", "no local ref moved"
    limit.write_text("1000\n")  # back
    out = syncer.pull()
    assert {o.id: o.action for o in out if o.kind == "conversation"} == {CID: "fast-forwarded"}
    assert "duplicateEntries" in refused(out)["refs/notes/meta"].detail
    assert store.log.load(CID).events[-1]["content"] == "arrives"


def test_a_git_that_must_not_prompt() -> None:
    def none() -> str:
        return ""

    def asked() -> str:
        raise AssertionError("core.sshCommand is read only when it matters")

    env = command.unattended({"PATH": "/bin"}, none)
    assert env == {
        "PATH": "/bin",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
    }
    own = command.unattended({"GIT_SSH_COMMAND": "/opt/ssh -i 'my key'"}, asked)
    assert own["GIT_SSH_COMMAND"] == "/opt/ssh -i 'my key' -o BatchMode=yes"
    configured = command.unattended({}, lambda: "ssh -F ~/.ssh/work")
    assert configured["GIT_SSH_COMMAND"] == "ssh -F ~/.ssh/work -o BatchMode=yes"
    # not OpenSSH, or a program rather than a command line: left as the user set it up
    assert "GIT_SSH_COMMAND" not in command.unattended({"GIT_SSH": "/usr/bin/plink"}, asked)
    plink = command.unattended({"GIT_SSH_COMMAND": "plink -batch"}, asked)
    assert plink["GIT_SSH_COMMAND"] == "plink -batch"
    already = command.unattended({"GIT_SSH_COMMAND": "ssh -o BatchMode=no"}, asked)
    assert already["GIT_SSH_COMMAND"] == "ssh -o BatchMode=no", "the user's own choice"
    assert command.unattended({"GIT_SSH_COMMAND": "ssh 'unclosed"}, asked)["GIT_TERMINAL_PROMPT"]
