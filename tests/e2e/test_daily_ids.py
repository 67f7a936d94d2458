"""Ids typed short, `use -`, `grep -i` and hits shown once, `rm` naming what went."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.harness import NO_MARKERS, RUST, WITH_COMPACTION, User, ids_in


def jp_folder(root: Path, digits: str, text: str = "hello there") -> Path:
    """A one-turn JP conversation folder whose id is ``jp-c<digits>``."""
    folder = root / f"{digits}-made-here"
    folder.mkdir(parents=True)
    events = [
        {"timestamp": "2026-03-01 10:00:00.0", "type": "turn_start"},
        {"timestamp": "2026-03-01 10:00:01.0", "type": "chat_request", "content": text},
        {"timestamp": "2026-03-01 10:00:02.0", "type": "chat_response", "message": "ok"},
    ]
    (folder / "events.json").write_text(json.dumps(events))
    (folder / "metadata.json").write_text('{"last_activated_at": "2026-03-01 10:00:02.0"}')
    return folder


def two(user: User, tmp_path: Path) -> tuple[str, str]:
    """jp-c17727391057 and jp-c17727484633: unique from the sixth digit on."""
    a = user.import_(jp_folder(tmp_path, "17727391057", "first one"))
    b = user.import_(jp_folder(tmp_path, "17727484633", "second one"))
    assert (a, b) == ("jp-c17727391057", "jp-c17727484633")
    return a, b


def test_every_command_takes_a_unique_prefix(user: User, tmp_path: Path) -> None:
    a, b = two(user, tmp_path)
    for typed in ("jp-c177273", "177273", "c177273", "17727391", a):
        assert user.show(typed)["id"] == a
    user.ok("conversation", "use", "177274")
    assert user.active() == b
    assert "first one" in user.ok("conversation", "print", "177273")
    user.ok("conversation", "edit", "177273", "--title", "renamed by prefix")
    assert user.show(a)["title"] == "renamed by prefix"
    fork = user.json("conversation", "fork", "177273")["id"]
    assert user.show(fork)["id"] == fork
    user.ok("conversation", "archive", "177273", "--yes")
    assert user.show("177273")["archived"] is True, "an archived id is found by prefix too"


def test_an_ambiguous_prefix_is_one_error_line_naming_the_candidates(
    user: User, tmp_path: Path
) -> None:
    rust, plain = two(user, tmp_path)
    before = user.refs()
    for typed in ("17727", "jp-c17727"):
        for args in (["conversation", "show", typed], ["conversation", "rm", typed, "--yes"]):
            proc = user.fail(*args)
            first = proc.stderr.splitlines()[0]
            assert first.startswith("error: ") and "ambiguous" in first, proc.stderr
            assert rust in first and plain in first, proc.stderr
    proc = user.fail("conversation", "show", "9999")
    assert "error:" in proc.stderr and "jp-c9999" in proc.stderr
    assert user.refs() == before


def test_hostile_prefixes_are_refused_before_they_reach_a_ref(user: User) -> None:
    user.import_(RUST)
    before = user.refs()
    for bad in ("178/../../HEAD", "178\n", "178 x", "c", "jp-c", "\x1b[2J178"):
        proc = user.fail("conversation", "show", bad)
        assert "\x1b" not in proc.stderr.replace("\\x1b", "")
        assert "error:" in proc.stderr
    assert user.refs() == before


def test_use_without_a_target_is_an_error_and_use_dash_goes_back(user: User) -> None:
    a = user.import_(RUST)
    b = user.import_(NO_MARKERS)
    proc = user.fail("conversation", "use")
    assert "error:" in proc.stderr and "use -" in proc.stderr
    proc = user.fail("conversation", "use", "-")
    assert "no previous conversation" in proc.stderr
    user.ok("conversation", "use", a)
    assert user.active() == a, "a failed `use` switched nothing"
    user.ok("conversation", "use", b)
    assert b in user.ok("conversation", "use", "-") and user.active() == a
    user.ok("conversation", "use", "-")
    assert user.active() == b
    user.ok("conversation", "rm", a, "--yes")
    proc = user.fail("conversation", "use", "-")
    assert "no previous conversation" in proc.stderr, "a removed conversation is not previous"
    assert user.active() == b


def test_grep_i_ignores_case_and_id_is_long_only(user: User) -> None:
    rust = user.import_(RUST)
    plain = user.import_(NO_MARKERS)
    assert user.run("conversation", "grep", "CLIPPY").returncode == 1  # smart case
    out = user.ok("conversation", "grep", "-i", "CLIPPY")
    assert f"{rust}:7:user:What does clippy say?" in out.splitlines()
    assert user.ok("conversation", "grep", "--ignore-case", "CLIPPY") == out
    proc = user.run("conversation", "grep", "--case-sensitive", "clippy", "--id", plain)
    assert proc.returncode == 1
    assert user.run("conversation", "grep", "--case-sensitive", "wHAT does").returncode == 1


def test_a_hit_shared_by_forks_prints_once_naming_them_all(user: User) -> None:
    rust = user.import_(RUST)
    one = user.json("conversation", "fork", rust)["id"]
    two = user.json("conversation", "fork", one)["id"]
    user.import_(WITH_COMPACTION)
    lines = user.ok("conversation", "grep", "What does clippy say?").splitlines()
    assert lines == [f"{rust},{one},{two}:7:user:What does clippy say?"]
    hits = user.json("conversation", "grep", "What does clippy say?")
    assert len(hits) == 1 and hits[0]["id"] == rust and hits[0]["ids"] == [rust, one, two]
    assert hits[0]["commit"] in user.commits(rust)
    only = user.json("conversation", "grep", "--id", one, "What does clippy say?")
    assert [h["ids"] for h in only] == [[one]]


def test_rm_names_each_conversation_it_removed(user: User, tmp_path: Path) -> None:
    a, b = two(user, tmp_path)
    user.ok("conversation", "edit", b, "--title", "evil\x1b]0;x\x07\nsecond line")
    out = user.ok("conversation", "rm", "177273", b, a, "--yes")
    lines = out.splitlines()
    assert len(lines) == 2, out
    assert lines[0].startswith(f"Removed {a}")
    assert lines[1].startswith(f"Removed {b}: evil") and "\\n" in lines[1]
    assert ids_in(out) == [a, b]
    assert user.ls() == []


def test_a_prefix_and_the_new_listing_keep_reads_off_libgit2(user: User, tmp_path: Path) -> None:
    from tests.e2e.test_no_sdk_import import LIBGIT2, heavy_modules

    a, _ = two(user, tmp_path)
    user.ok("conversation", "use", "177273")
    reads = (
        ["conversation", "show", "177273"],
        ["conversation", "ls", "--since", "1000w", "--sort", "title"],
        ["conversation", "ls", "--label", "x", "--pinned"],
    )
    for args in reads:  # the first run may fill the cache from git
        heavy_modules(user, *args)
    for args in reads:
        assert LIBGIT2 not in heavy_modules(user, *args), f"`jp {' '.join(args)}` loaded libgit2"
    assert user.active() == a


def test_importing_a_folder_again_says_so_and_writes_nothing(user: User, tmp_path: Path) -> None:
    folder = jp_folder(tmp_path, "17727391057", "first one")
    cid = user.import_(folder)
    before = user.refs()
    proc = user.run("conversation", "import", str(folder))
    assert proc.returncode == 0 and proc.stdout == f"{cid}\n"
    assert proc.stderr == f"{cid}: already in the store (imported before); nothing written\n"
    assert user.refs() == before, "a second import of the same folder wrote something"
    user.ok("q", "--id", cid, "and a new turn")  # it grew here: still the same import
    rows = user.json("conversation", "import", str(folder))
    assert rows == [{"id": cid, "folder": str(folder), "events": 3, "action": "unchanged"}]
    other = jp_folder(tmp_path / "other", "17727391057", "a different conversation")
    proc = user.run("conversation", "import", str(other))
    (new,) = ids_in(proc.stdout)
    assert new != cid and f"{new}: a new id, since {cid} is another conversation here" in proc.stderr
    assert len(user.ls()) == 2


def test_use_dash_skips_a_conversation_only_queried_by_id(user: User) -> None:
    a = user.import_(RUST)
    b = user.import_(NO_MARKERS)
    c = user.import_(WITH_COMPACTION)
    user.ok("conversation", "use", a)
    user.ok("conversation", "use", b)
    user.ok("q", "-i", c, "a question that leaves the active one alone")
    assert user.active() == b
    user.ok("conversation", "use", "-")
    assert user.active() == a, "`use -` goes to the conversation active before, as `cd -`"
