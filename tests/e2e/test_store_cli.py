"""The store through the real `jp`: conversations are branches of event commits
that plain git reads (design sections 1 and 6)."""

from __future__ import annotations

import base64
import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from tests.e2e.harness import NO_MARKERS, OWN_FOLDERS, RUST, WITH_COMPACTION, User, ids_in
from tests.e2e.jpcount import entries_of, jp_events, jp_turns


def epoch(jp_time: str) -> int:
    moment = datetime.fromisoformat(jp_time.replace(" ", "T").replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())



# -- init ----------------------------------------------------------------------


def test_init_makes_a_bare_files_store_and_is_idempotent(user: User, tmp_path: Path) -> None:
    assert user.git("rev-parse", "--is-bare-repository").strip() == "true"
    assert user.git("config", "core.logAllRefUpdates").strip() == "always"
    assert user.git("config", "extensions.refStorage", check=False).strip() in ("", "files")
    assert (user.store / "refs").is_dir()
    cid = user.import_(RUST)
    before = user.refs()
    out = user.ok("init")
    assert str(user.store) in out
    assert user.refs() == before, "a second `jp init` changed the store"
    assert user.show(cid)["turns"] == 8

    elsewhere = tmp_path / "other" / "store.git"
    user.ok("init", str(elsewhere))
    proc = user.run("--store", str(elsewhere), "--format", "json", "conversation", "ls")
    assert proc.returncode == 0 and json.loads(proc.stdout) == []
    nonempty = tmp_path / "not-a-store"
    nonempty.mkdir()
    (nonempty / "notes.txt").write_text("mine")
    user.fail("init", str(nonempty))
    assert (nonempty / "notes.txt").read_text() == "mine"


def test_init_here_keeps_conversations_in_the_project_repository(user: User) -> None:
    project = user.root / "project"
    (project / "src").mkdir(parents=True)

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(project), *args], env=user.env, check=True,
                              capture_output=True, text=True).stdout

    git("init", "-q")
    (project / "README").write_text("hello\n")
    git("add", "README")
    git("commit", "-q", "-m", "first")
    (project / "README").write_text("hello\nstaged change\n")
    git("add", "README")
    (project / "notes.txt").write_text("untracked\n")
    head, branches = (project / ".git" / "HEAD").read_text(), git("for-each-ref", "refs/heads")
    index, status = (project / ".git" / "index").read_bytes(), git("status", "--porcelain")
    out = user.run("init", "--here", cwd=project, drop=["JP_STORE"])
    assert out.returncode == 0 and ".git" in out.stdout
    proc = user.run("q", "--new", "asked inside the project", cwd=project / "src", drop=["JP_STORE"])
    assert proc.returncode == 0, proc.stderr
    conversations = git("for-each-ref", "--format=%(refname)", "refs/conversations")
    assert conversations.startswith("refs/conversations/jp-c")
    assert "asked inside the project" in git("log", "-p", conversations.strip())
    assert (project / ".git" / "HEAD").read_text() == head
    assert git("for-each-ref", "refs/heads") == branches
    assert (project / ".git" / "index").read_bytes() == index
    assert git("status", "--porcelain") == status
    assert user.refs() == {}, "the conversation went to the JP_STORE store"


# -- import: ids, commits, subjects ---------------------------------------------


def test_import_keeps_ids_and_writes_one_commit_per_event(user: User) -> None:
    out = user.ok("conversation", "import", *map(str, OWN_FOLDERS))
    ids = ids_in(out)
    assert ids == ["jp-c" + f.name.split("-", 1)[0] for f in OWN_FOLDERS]
    for folder, cid in zip(OWN_FOLDERS, ids, strict=True):
        entries = entries_of(folder)
        commits = user.commits(cid)
        assert len(commits) == len(entries) + 1, "one commit per event, plus the creation event"
        for commit in commits[:3] + commits[-3:]:
            tree = user.git("ls-tree", "--name-only", commit).split()
            assert tree == ["event.json"], tree
        stored = user.events(cid)
        assert stored[0]["type"] == "conversation_start"
        assert stored[0]["conversation_id"] == cid
        assert [e["type"] for e in stored[1:]] == [e["type"] for e in entries]
        # author dates are the events' times; RFC 3339 at rest
        dates = [int(d) for d in user.git("log", "--reverse", "--format=%at", commits[-1]).split()]
        assert dates[1:] == [epoch(e["timestamp"]) for e in entries]
        known = [e for e in stored if e["type"] != "turn_rating"]  # unknown tags stay verbatim
        assert all(e["timestamp"].endswith("Z") and "T" in e["timestamp"] for e in known)
        # canonical JSON: sorted keys
        raw = user.git("show", f"{commits[2]}:event.json")
        assert list(json.loads(raw)) == sorted(json.loads(raw))
        # the single ref of the conversation and its reflog entry
        assert user.git("reflog", "show", f"refs/conversations/{cid}").strip()
    # importing the same folder again never overwrites and never copies: it is said
    tip = user.tip(ids[0])
    proc = user.run("conversation", "import", str(RUST))
    assert proc.returncode == 0 and ids_in(proc.stdout) == [ids[0]]
    assert "already in the store" in proc.stderr
    assert user.tip(ids[0]) == tip and len(user.ls()) == len(OWN_FOLDERS)
    user.fsck()


def test_git_log_reads_as_a_transcript(user: User) -> None:
    rust = user.import_(RUST)
    compacted = user.import_(WITH_COMPACTION)
    subjects = user.git("log", "--reverse", "--format=%s", user.tip(rust)).splitlines()
    assert subjects[0] == f"start: conversation {rust}"
    assert subjects[1] == "turn: start"
    first_request = entries_of(RUST)[1]["content"].splitlines()[0]
    assert subjects[2].startswith("user: " + first_request[:40])
    assert all(len(s) <= 90 and s.strip() for s in subjects)
    assert "tool call fs_list_files: {" in "\n".join(subjects)
    assert any(s.startswith("tool ") and s.endswith(": error") for s in subjects)
    assert any(s.startswith("reasoning: ") for s in subjects)
    oneline = user.git("log", "--oneline", f"refs/conversations/{rust}")
    assert "assistant: " in oneline and "user: " in oneline
    entries = entries_of(RUST)
    names = {e["id"]: e["name"] for e in entries if e["type"] == "tool_call_request"}
    failed = next(e for e in entries if e["type"] == "tool_call_response" and e["is_error"])
    assert [s for s in subjects if s.endswith(": error")] == [f"tool {names[failed['id']]}: error"]
    others = user.git("log", "--format=%s", user.tip(compacted)).splitlines()
    assert "compaction: summarize turns 2-8" in others
    assert any(s.startswith("config: assistant.model") for s in others)
    assert "turn_rating: (kept from a newer writer)" in others
    # a long message keeps its whole text in the commit body
    body = user.git("log", "-1", "--format=%B", user.tip(rust))
    assert entries_of(RUST)[-1]["message"].strip() in body
    assert "Jp-Event: chat_response" in body


def test_base64_is_decoded_at_rest(user: User) -> None:
    cid = user.import_(RUST)
    entries = entries_of(RUST)
    stored = user.events(cid)[1:]
    history = user.git("log", "-p", f"refs/conversations/{cid}")
    request = next(e for e in entries if e["type"] == "tool_call_request")
    encoded = request["arguments"]["prefixes"][0]
    assert encoded == base64.b64encode(b".").decode()
    response = next(e for e in entries if e["type"] == "tool_call_response" and e["is_error"])
    plain = base64.b64decode(response["content"]).decode()
    assert "E0432" in plain
    assert "E0432" in history and response["content"] not in history
    reasoning = next(e for e in entries if "reasoning" in e)
    signature = base64.b64decode(reasoning["metadata"]["anthropic_thinking_signature"]).decode()
    kept = next(e for e in stored if "reasoning" in e)
    assert kept["metadata"]["anthropic_thinking_signature"] == signature
    for old, new in zip(entries, stored, strict=True):
        if old["type"] == "chat_request":
            assert new["content"] == old["content"], "plain fields are not touched"


# -- show, ls --------------------------------------------------------------------


def test_show_counts_turns_and_events_like_jp(pinned: User) -> None:
    user = pinned
    ids = ids_in(user.ok("conversation", "import", *map(str, OWN_FOLDERS)))
    expected = {"jp-c17800000101": (8, 66), "jp-c17800000102": (1, 6), "jp-c17800000103": (12, 75)}
    shown = user.json("conversation", "show", *ids)
    assert isinstance(shown, list) and len(shown) == 3
    for folder, info in zip(OWN_FOLDERS, shown, strict=True):
        entries = entries_of(folder)
        assert (info["turns"], info["events"]) == (jp_turns(entries), jp_events(entries))
        assert (info["turns"], info["events"]) == expected[info["id"]]
        assert info["archived"] is False and info["source_id"] is None
    assert shown[0]["title"] == "Setting up a Rust CLI"
    assert shown[0]["compactions"] == []
    (standing,) = shown[2]["compactions"]
    assert (standing["from_turn"], standing["to_turn"]) == (2, 8), "1-based in show"
    assert standing["summary"]
    assert user.ok("conversation", "show", ids[2]) == (
        "ID:           jp-c17800000103\n"
        "Title:        With compaction\n"
        "Turns:        12\n"
        "Events:       75\n"
        "Latest event: 2026-05-28T20:45:21.146296Z\n"
        "State:        live\n"
        "Active:       no\n"
        "Pinned:       no\n"
        "Model:        offline/jp, from default: no model configured\n"
        "Recorded:     nothing\n"
        "Tokens:       ~896 (estimated)\n"
        "Compactions:\n"
        "  1. turns 2-8 (summary)\n"
    )


def test_ls_json_fields_and_active_flag(pinned: User) -> None:
    user = pinned
    a = user.import_(RUST)
    b = user.import_(NO_MARKERS)
    user.ok("conversation", "use", b)
    rows = user.ls()
    assert {r["id"] for r in rows} == {a, b}
    need = {"id", "title", "turns", "events", "archived", "active", "pinned", "source_id"}
    for row in rows:
        assert need <= set(row), sorted(row)
        assert row["source_id"] is None and row["archived"] is False
    by_id = {r["id"]: r for r in rows}
    assert by_id[b]["active"] is True and by_id[a]["active"] is False
    assert (by_id[a]["turns"], by_id[a]["events"]) == (8, 66)
    assert by_id[a]["title"] == "Setting up a Rust CLI"
    assert rows[-1]["id"] == b, "the active conversation is listed last"
    assert user.ok("conversation", "ls") == (
        "ID               AGE       TURNS  TITLE\n"
        "jp-c17800000101  just now      8  Setting up a Rust CLI\n"
        "jp-c17800000102* just now      1  No turn markers\n"
    )
    assert user.ls("--archived") == []


# -- fork, archive, rm -------------------------------------------------------------


def test_fork_is_a_branch_that_shares_history(pinned: User) -> None:
    user = pinned
    cid = user.import_(RUST)
    user.ok("conversation", "edit", cid, "--title", "Original title")
    before = user.tip(cid)
    fork = "jp-c17676037800"  # the pinned clock's time of the fork: 09:03
    assert user.ok("conversation", "fork", cid) == fork + "\n"
    fork_tip = user.tip(fork)
    assert user.git("merge-base", before, fork_tip).strip() == before
    assert user.git("rev-parse", f"{fork_tip}^").strip() == before, "one creation commit"
    start = user.event(fork_tip)
    assert start["type"] == "conversation_start" and start["conversation_id"] == fork
    assert start["forked_from"]["conversation_id"] == cid
    assert start["forked_from"]["commit"] == before
    assert user.tip(cid) == before, "forking wrote to the source"
    info = user.show(fork)
    assert (info["turns"], info["events"]) == (8, 66)
    assert info["title"] == "Original title"

    short = "jp-c17676039000"
    assert user.ok("conversation", "fork", cid, "--last", "2") == short + "\n"
    assert user.show(short)["turns"] == 2
    assert user.git("merge-base", before, user.tip(short), check=False).strip() == "", (
        "a filtered fork is a new chain"
    )
