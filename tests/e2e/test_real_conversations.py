"""The sixteen real JP conversations of ../shared/fixtures through the real jp.

A fresh clone has no ../shared, so this module skips there.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import REAL, SHARED, User, ids_in
from tests.e2e.jpcount import entries_of, jp_events, jp_turns
from tests.support import fake_messages

pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason="needs ../shared/fixtures")

FOLDERS = sorted(p for p in REAL.iterdir() if p.is_dir()) if REAL.is_dir() else []
LARGEST = max(FOLDERS, key=lambda p: (p / "events.json").stat().st_size) if FOLDERS else None


def jp_id(folder: Path) -> str:
    return "jp-c" + folder.name.split("-", 1)[0]


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> tuple[User, User]:
    """A store holding all sixteen (imported in one go) and an empty second one."""
    first = User(tmp_path_factory.mktemp("real"), "first")
    second = User(first.root.parent, "second")
    for person in (first, second):
        person.ok("init")
    out = first.ok("conversation", "import", *map(str, FOLDERS))
    assert ids_in(out) == [jp_id(f) for f in FOLDERS]
    first.fsck()
    return first, second


def validators() -> list[Callable[[dict[str, Any]], None]]:
    found: list[Callable[[dict[str, Any]], None]] = [fake_messages.validate]
    path = SHARED / "fakeclaude" / "fakeclaude.py"
    if path.exists():
        spec = importlib.util.spec_from_file_location("shared_fakeclaude", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found.append(module.validate)
    return found


def test_all_sixteen_are_there() -> None:
    assert len(FOLDERS) == 16


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name.split("-", 1)[0])
def test_real_conversation_round_trip(
    users: tuple[User, User], folder: Path, tmp_path: Path
) -> None:
    first, second = users
    cid = jp_id(folder)
    entries = entries_of(folder)
    info = first.show(cid)
    assert (info["turns"], info["events"]) == (jp_turns(entries), jp_events(entries))
    assert len(first.commits(cid)) == len(entries) + 1

    printed = first.ok("conversation", "print", cid)
    request = next(e["content"] for e in entries if e["type"] == "chat_request")
    assert " ".join(request.split()[:4]) in " ".join(printed.split())

    out = tmp_path / folder.name
    first.ok("conversation", "export", cid, "--output", str(out))
    exported = json.loads((out / "events.json").read_text())
    assert [e["type"] for e in exported] == [e["type"] for e in entries]
    again = second.import_(out)
    assert again == cid
    copy = second.show(cid)
    assert (copy["turns"], copy["events"]) == (info["turns"], info["events"])
    assert second.kinds(cid) == first.kinds(cid)

    before = len(first.commits(cid))
    first.ok("conversation", "compact", cid)
    added = len(first.commits(cid)) - before
    assert added == (1 if info["turns"] >= 3 else 0), "the default rule needs a middle turn"
    compacted = first.ok("conversation", "print", "--compacted", cid)
    assert compacted.strip()

    # the request a model would be sent after the compaction is one the API accepts
    from gitstore.store.core import Store
    from porcelain.domain.view import model_events
    from porcelain.models.messages import to_messages

    events = Store(first.store).log.load(cid).events
    visible = model_events(events)
    tool = {"name": "fs_read_file", "input_schema": {"type": "object", "properties": {}}}
    for declared in (False, True):
        body: dict[str, Any] = {
            "model": "claude-test",
            "max_tokens": 1024,
            "messages": to_messages(visible, tools=declared, cache=True),
        }
        if declared:
            body["tools"] = [tool]
        for validate in validators():
            validate(body)


def test_stores_stay_clean(users: tuple[User, User]) -> None:
    for person in users:
        person.fsck()


def test_review_of_the_largest_offline(tmp_path: Path) -> None:
    assert LARGEST is not None
    user = User(tmp_path)
    user.ok("init")
    source = user.import_(LARGEST)
    turns = user.show(source)["turns"]
    user.ok("conversation", "use", source)
    out = user.ok("conversation", "compact", "--interactive")
    review = user.active()
    assert review in ids_in(out) and review != source
    proposal = user.show(review)["proposal"]
    assert (proposal["from_turn"], proposal["to_turn"]) == (2, turns - 1)
    assert proposal["summary"]
    user.ok("q", "keep the last 3")
    assert user.show(review)["proposal"]["to_turn"] == turns - 3
    tip = user.tip(source)
    user.ok("conversation", "compact", "--continue", "--yes")
    event = user.event(user.tip(source))
    assert user.git("rev-parse", f"{user.tip(source)}^").strip() == tip
    assert (event["from_turn"], event["to_turn"]) == (1, turns - 4)
    user.fsck()


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name.split("-", 1)[0])
def test_the_opening_coverage_of_each_real_conversation_is_honest(
    users: tuple[User, User], folder: Path
) -> None:
    """The offline review's opening proposal, on every real conversation: its coverage
    report lists no fact its summary holds, and every fact it lists is of its range."""
    first, _ = users
    cid = jp_id(folder)
    turns = first.show(cid)["turns"]
    first.ok("conversation", "compact", cid, "--interactive", "--from", "1", "--to", str(turns))
    review = first.active()
    assert review != cid
    try:
        proposal = first.show(review)["proposal"]
        summary, coverage = proposal["summary"] or "", proposal["coverage"]
        kept = [m for m in coverage["missing"] if m["text"] in summary]
        assert not kept, f"listed as missing though the summary holds them: {kept[:3]}"
        lo, hi = proposal["from_turn"], proposal["to_turn"]
        outside = [m for m in coverage["missing"] if not lo <= m["turn"] <= hi]
        assert not outside, f"facts from outside turns {lo}-{hi}: {outside[:3]}"
        assert coverage["tokens"]["after"] <= coverage["tokens"]["before"]
    finally:
        first.ok("conversation", "compact", "--abort")
