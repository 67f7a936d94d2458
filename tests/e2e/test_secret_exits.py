"""Secrets stay on the machine (docs/security.md): push and sync hold back what holds
one, redact takes it out (one operation, undone by `jp undo`, refused once a remote
has it), share writes a page without it, and only the user's own file allows one.

The planted corpus is tests/support/secretcorpus.py: 26 kinds in Claude Code and
Codex sessions (prompts, thinking, shell and MCP results, file reads, patches,
answers, the session's title) and in JP conversations (a tool result, an
attachment)."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.harness import User, write_conversation
from tests.support import secretcorpus as corpus
from tests.support.secretcorpus import PLANTED, claude_code_session, codex_home

VALUES = [value for _, value in PLANTED.values()]


def remote_objects(remote: Path) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(remote), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip


def leaked(remote: Path) -> list[str]:
    data = remote_objects(remote)
    return [v for v in VALUES if v.encode() in data or v.replace("/", "\\/").encode() in data]


def leaky_jp(folder: Path, kind: str = "aws secret access key", *, attachment: str = "") -> Path:
    return Path(str(corpus.leaky_jp(folder, kind, attachment=attachment)))


@pytest.fixture
def origin(user: User, tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    user.ok("remote", "add", "origin", str(remote))
    return remote


def test_no_planted_secret_reaches_the_remote_until_redacted(user: User, origin: Path, tmp_path: Path) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    planted = claude_code_session(claude) + codex_home(codex)
    assert len(set(planted)) >= 20
    user.ok("conversation", "import", "--from", "claude-code", str(claude))
    user.ok("conversation", "import", "--from", "codex", str(codex))
    jp_id = user.import_(leaky_jp(tmp_path / "17800000950-jp", "private key", attachment="jwt"))
    clean = user.import_(write_conversation(tmp_path / "17800000951-clean", 2))
    ids = [row["id"] for row in user.ls("--all")]
    proc = user.fail("push", "origin")
    for cid in ids:
        if cid != clean:
            assert cid in proc.stderr
    assert "redact" in proc.stderr and "secrets.allow" in proc.stderr
    assert not [v for v in VALUES if v in proc.stdout + proc.stderr]
    assert leaked(origin) == []
    assert f"refs/conversations/{clean}" in subprocess.run(
        ["git", "--git-dir", str(origin), "for-each-ref"], capture_output=True, text=True, check=True
    ).stdout, "the clean conversation of the same push goes"
    scanned = user.json("conversation", "scan", *[i for i in ids if i != clean])
    assert {f["kind"] for f in scanned} == set(PLANTED)
    assert not [v for v in VALUES if v in json.dumps(scanned)]
    user.ok("conversation", "redact", *ids)
    user.ok("push", "origin")
    assert leaked(origin) == []
    printed = user.ok("conversation", "print", "--style", "full", jp_id)
    assert "[redacted: private key]" in printed
    session = next(r["id"] for r in user.ls("--all") if (r.get("imported_from") or {}).get("tool") == "claude-code")
    back = user.run("conversation", "export", "--to", "claude-code", session, "-o", str(tmp_path / "back"))
    assert back.returncode == 0 and "was redacted" in back.stderr
    written = "".join(p.read_text() for p in (tmp_path / "back").rglob("*.jsonl"))
    assert "[redacted: " in written and not [v for v in VALUES if v in written]


def test_sync_holds_back_too_and_the_allow_list_is_the_users_own(user: User, origin: Path, tmp_path: Path) -> None:
    folder = leaky_jp(tmp_path / "17800000960-leaky", "github token")
    events = json.loads((folder / "events.json").read_text())
    hostile = {"secrets": {"allow": {"kinds": ["github token"], "conversations": ["jp-c17800000960"]}}}
    events.insert(1, {"type": "config_delta", "timestamp": events[0]["timestamp"], "delta": hostile})
    (folder / "events.json").write_text(json.dumps(events))
    cid = user.import_(folder)
    assert "github token" in user.fail("sync", "origin").stderr, "a conversation allowed itself"
    assert leaked(origin) == []
    user.config('[secrets.allow]\nkinds = ["github token"]\n')
    user.ok("push", "origin")
    assert PLANTED["github token"][1].encode() in remote_objects(origin), "the allow-list let it go"
    # on the remote now: a redaction would leave the remote's copy, so it is refused
    user.config("")
    before = user.commits(cid)
    proc = user.fail("conversation", "redact", cid)
    assert "origin" in proc.stderr and "by hand" in proc.stderr
    assert user.commits(cid) == before


def test_an_allowed_hash_lets_one_value_through_and_no_other(user: User, origin: Path, tmp_path: Path) -> None:
    cid = user.import_(leaky_jp(tmp_path / "17800000970-leaky", "stripe key"))
    (finding,) = user.json("conversation", "scan", cid)
    user.config(f'[secrets.allow]\nhashes = ["{finding["hash"]}"]\n')
    assert user.json("conversation", "scan", cid) == []
    user.ok("push", "origin")
    other = user.import_(leaky_jp(tmp_path / "17800000971-other", "npm token"))
    assert other in user.fail("push", "origin").stderr


def test_redact_is_one_operation_that_undo_reverts(user: User, tmp_path: Path) -> None:
    cid = user.import_(leaky_jp(tmp_path / "17800000980-leaky", "aws secret access key"))
    before = user.commits(cid)
    out = user.json("conversation", "redact", "--kind", "aws secret access key", cid)
    assert out[0]["redacted"] == 1 and out[0]["kinds"] == {"aws secret access key": 1}
    after = user.commits(cid)
    first = out[0]["from_event"]
    assert after[:first] == before[:first] and after[first:] != before[first:]
    assert len(after) == len(before)
    assert PLANTED["aws secret access key"][1] not in json.dumps(user.events(cid))
    assert "redact" in user.json("op", "log")[0]["command"]
    user.ok("undo")
    assert user.commits(cid) == before
    assert "nothing to redact" in user.ok("conversation", "redact", "--kind", "jwt", cid)
    assert user.fail("conversation", "redact", "--kind", "no such kind", cid).returncode == 2


@pytest.mark.parametrize("point", ["rewrite:objects-written", "oplog:objects-written"])
def test_a_kill_during_redact_leaves_the_original_or_the_whole_redaction(
    user: User, tmp_path: Path, point: str
) -> None:
    cid = user.import_(leaky_jp(tmp_path / "17800000990-leaky", "slack token"))
    before = user.commits(cid)
    proc = user.run("conversation", "redact", cid, env={"JP_FAULT": point})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    user.fsck()
    after = user.commits(cid)
    assert after == before or PLANTED["slack token"][1] not in json.dumps(user.events(cid))
    assert len(after) == len(before)
    user.ok("conversation", "redact", cid)
    assert PLANTED["slack token"][1] not in json.dumps(user.events(cid))
    user.fsck()


def test_share_writes_one_page_without_secrets_or_outside_requests(user: User, tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    claude_code_session(claude)
    user.ok("conversation", "import", "--from", "claude-code", str(claude))
    cid = user.ls()[0]["id"]
    page = tmp_path / "page.html"
    out = user.json("conversation", "share", cid, "-o", str(page))
    html = page.read_text(encoding="utf-8")
    assert out["redacted"] and "[redacted: " in html and "<style>" in html
    assert not [v for v in VALUES if v in html]
    assert "default-src 'none'" in html and ' src="' not in html and "<link" not in html
    assert "deploy with this key please" in html


def test_export_warns_of_secrets_and_redacts_on_request(user: User, tmp_path: Path) -> None:
    cid = user.import_(leaky_jp(tmp_path / "17800000995-leaky", "github token", attachment="jwt"))
    warned = user.run("conversation", "export", cid, "-o", str(tmp_path / "plain"))
    assert warned.returncode == 0 and "warning" in warned.stderr and "--redact" in warned.stderr
    assert PLANTED["github token"][1] not in warned.stderr
    out = user.json("conversation", "export", cid, "--redact", "-o", str(tmp_path / "redacted"))
    assert out["secrets"] == {"github token": 1, "jwt": 1} and out["redacted"] is True
    other = User(tmp_path, "other")
    other.ok("init")
    back = other.import_(tmp_path / "redacted")
    assert other.json("conversation", "scan", back) == []
    assert "[redacted: github token]" in other.ok("conversation", "print", "--style", "full", back)
    # --to codex --redact is a session export: this JP conversation is none (test_secret_export.py)
    assert user.fail("conversation", "export", "--to", "codex", "--redact", cid, "-o", str(tmp_path / "s")).returncode == 1


def test_serve_masks_secrets_unless_this_machine_asks(user: User, tmp_path: Path) -> None:
    from tests.e2e.serve.store import serving
    from tests.e2e.test_serve import Client

    cid = user.import_(leaky_jp(tmp_path / "17800000996-leaky", "aws secret access key"))
    value = PLANTED["aws secret access key"][1]
    with serving(user) as (url, _proc):
        client = Client(url)
        page = client.page(f"/c/{cid}")
        assert value not in page and "[redacted: aws secret access key]" in page
        assert value not in json.dumps(client.api(f"/c/{cid}"))
        assert "show the 1 secret(s) found" in page
        assert value in client.page(f"/c/{cid}?secrets=1")  # a request from loopback


def test_a_fork_of_a_leaky_conversation_is_held_too_and_bad_input_is_refused(
    user: User, origin: Path, tmp_path: Path
) -> None:
    cid = user.import_(leaky_jp(tmp_path / "17800000997-leaky", "databricks token"))
    fork = user.ok("conversation", "fork", cid).split()[-1]
    proc = user.fail("push", "origin")
    assert cid in proc.stderr and fork in proc.stderr
    assert leaked(origin) == []
    assert user.fail("conversation", "redact", "../../etc").returncode == 1
    assert user.fail("conversation", "scan", "jp-c999").returncode == 1
    assert user.fail("conversation", "share", cid, "-o", str(tmp_path)).returncode == 2
    assert user.fail("conversation", "redact").returncode == 2


def test_on_tool_result_redacts_before_the_store_and_the_model(user: User, tmp_path: Path) -> None:
    import sys

    from tests.e2e.harness import tool_use
    from tests.support.fake_messages import FakeMessages

    text, value = PLANTED["github token"]
    command = json.dumps([sys.executable, "-c", f"print({text!r})"])
    with FakeMessages() as fake:
        user.connect(fake.env(), model="")
        config = f'[assistant.model]\nid = "anthropic/claude-test"\n\n[conversation.tools.env]\ncommand = {command}\nconfirm = false\n'
        user.config(config + "\n[redaction]\non_tool_result = true\n")
        fake.reply_blocks([tool_use("env")], {"last_user_contains": "show env"})
        fake.reply_text("Read it.")
        user.ok("q", "--new", "show env")
        sent = json.dumps(fake.requests[-1])
    cid = user.active()
    (result,) = [e for e in user.events(cid) if e["type"] == "tool_call_response"]
    assert "[redacted: github token]" in result["content"] and value not in json.dumps(result)
    assert value not in sent and "[redacted: github token]" in sent


def test_a_secret_in_a_title_or_label_holds_the_metadata_until_redacted(
    user: User, origin: Path, tmp_path: Path
) -> None:
    cid = user.import_(write_conversation(tmp_path / "17800000998-titled", 1))
    user.ok("push", "origin")  # the metadata travels once, clean
    title, token = PLANTED["github token"]
    user.ok("conversation", "edit", "--title", title, "--label", f"db={PLANTED['stripe key'][0]}", cid)
    other = user.import_(write_conversation(tmp_path / "17800000999-other", 1))
    proc = user.fail("push", "origin")
    assert f"{cid} labels (stripe key); {cid} title (github token)" in proc.stderr
    assert "metadata" in proc.stderr and "redact" in proc.stderr
    assert not [v for v in VALUES if v in proc.stdout + proc.stderr]
    assert leaked(origin) == [], "neither the note nor the notes history went"
    refs = subprocess.run(["git", "--git-dir", str(origin), "for-each-ref"], capture_output=True, text=True, check=True).stdout
    assert f"refs/conversations/{other}" in refs, "the conversations went"
    out = user.json("conversation", "redact", cid)
    assert out[0]["metadata"] == {"github token": 1, "stripe key": 1} and out[0]["redacted"] == 0
    user.ok("push", "origin")
    assert leaked(origin) == []
    (row,) = [r for r in user.ls("--all") if r["id"] == cid]
    assert row["title"] == "remote: token [redacted: github token] ok"
    user.ok("undo")  # the original note is back here, and held again
    assert any(r.get("title") == title for r in user.ls("--all"))
    assert "metadata" in user.fail("sync", "origin").stderr
    assert leaked(origin) == [] and token not in remote_objects(origin).decode("utf-8", "replace")


@pytest.mark.parametrize("point", ["notes:objects-written", "oplog:objects-written"])
def test_a_kill_during_a_metadata_redaction_leaves_the_old_notes_or_the_new(
    user: User, origin: Path, tmp_path: Path, point: str
) -> None:
    cid = user.import_(write_conversation(tmp_path / "17800000995-titled", 1))
    user.ok("push", "origin")
    title, token = PLANTED["slack token"]
    user.ok("conversation", "edit", "--title", title, cid)
    proc = user.run("conversation", "redact", cid, env={"JP_FAULT": point})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    user.fsck()
    (row,) = [r for r in user.ls("--all") if r["id"] == cid]
    assert row["title"] in (title, title.replace(token, "[redacted: slack token]"))
    user.ok("conversation", "redact", cid)
    user.ok("push", "origin")
    assert leaked(origin) == []
    user.fsck()


def test_a_push_meets_an_event_damaged_outside_jp_with_one_error_and_sends_nothing_of_it(
    user: User, origin: Path, tmp_path: Path
) -> None:
    """The secret check reads every event it would send: a tip whose event.json was
    written by hand (not JSON) stops the push with one error line naming the commit,
    and the remote keeps the tip it had."""
    cid = user.import_(write_conversation(tmp_path / "17800000998-clean", 2))
    user.ok("push", "origin")
    ref = f"refs/conversations/{cid}"
    git = ["git", "--git-dir", str(user.store)]
    sent = subprocess.run([*git, "rev-parse", ref], capture_output=True, text=True, check=True).stdout.strip()

    def plumbing(*args: str, data: str = "") -> str:
        env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
               "GIT_COMMITTER_EMAIL": "a@b", "PATH": "/usr/bin:/bin"}  # fmt: skip
        run = subprocess.run([*git, *args], input=data, capture_output=True, text=True, env=env, check=True)
        return run.stdout.strip()

    blob = plumbing("hash-object", "-w", "--stdin", data='{"type": "user_msg", broken')
    tree = plumbing("mktree", data=f"100644 blob {blob}\tevent.json\n")
    damaged = plumbing("commit-tree", tree, "-p", sent, data="by hand\n")
    plumbing("update-ref", ref, damaged, sent)
    proc = user.fail("push", "origin", code=1)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and damaged[:12] in errors[0] and "Traceback" not in proc.stderr, proc.stderr
    there = subprocess.run(
        ["git", "--git-dir", str(origin), "rev-parse", ref], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert there == sent
