"""`jp config unset --conversation KEY` killed while it appends, alone, while git
packs refs (what gc does to them) or among a dead writer's leftovers: the
conversation holds the removal whole or not at all, and running it again ends
in the same place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reliability.harness import AROUND, Others, Sandbox

KEY = "assistant.model.id"
UNSET = ("config", "unset", "--conversation", KEY)
REMOVAL = {"assistant": {"model": {"id": None}}}


def deltas(box: Sandbox) -> list[object]:
    (conv,) = box.conversations().values()
    return [e["delta"] for e in conv.events if e.get("type") == "config_delta"]


def model(box: Sandbox) -> str:
    return str(json.loads(box.ok("-F", "json", "config", "show", "--conversation"))[KEY]["value"])


@pytest.mark.parametrize("around", AROUND)
def test_a_killed_unset_leaves_the_removal_whole_or_absent(tmp_path: Path, around: str) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    box.ok("config", "set", KEY, "offline/echo")
    box.ok("q", "-m", "offline/chosen", "hello")
    before = deltas(box)
    others = Others(box, around)
    with others.running():
        box.kill("append:objects-written", *UNSET)
    box.fsck()
    assert deltas(box) == before, "a killed unset changed the conversation"
    with others.running():
        box.ok("conversation", "ls")  # the next command repairs
        assert model(box) == "offline/chosen"
        box.ok(*UNSET)
    box.fsck()
    assert deltas(box) == [*before, REMOVAL]
    assert model(box) == "offline/echo"
    assert box.leftovers() == others.planted
