"""What undo may write back to a remote's settings: only jp's own change, compared first."""

from __future__ import annotations

from gitstore.oplog import remotediff

OWN = "+refs/heads/*:refs/remotes/origin/*"
JP = "+refs/conversations/*:refs/jp-remotes/origin/conversations/*"
BEFORE = {"url": "/srv/code.git", "fetch": [OWN], "push": []}
AFTER = {"url": "/srv/code.git", "fetch": [OWN, JP], "push": []}


def test_only_the_keys_the_change_altered_are_compared() -> None:
    moved = {**AFTER, "url": "/srv/moved.git"}
    assert remotediff.changed(BEFORE, AFTER) == ["fetch"]
    assert remotediff.conflicts(BEFORE, AFTER, moved) == []
    extra = {**AFTER, "fetch": [OWN, JP, "+refs/tags/*:refs/tags/*"]}
    assert remotediff.conflicts(BEFORE, AFTER, extra) == ["fetch"]


def test_taking_back_a_change_keeps_what_others_set_since() -> None:
    moved = {**AFTER, "url": "/srv/moved.git", "fetch": [OWN, JP, "+refs/tags/*:refs/tags/*"]}
    back = remotediff.reverted(BEFORE, AFTER, moved)
    assert back == {"url": "/srv/moved.git", "fetch": [OWN, "+refs/tags/*:refs/tags/*"], "push": []}


def test_a_remote_jp_made_goes_unless_someone_set_its_url_since() -> None:
    made = {
        "url": "/srv/jp.git",
        "fetch": [JP],
        "push": ["refs/conversations/*:refs/conversations/*"],
    }
    assert remotediff.reverted(None, made, made) is None
    moved = {**made, "url": "/srv/other.git"}
    assert remotediff.conflicts(None, made, moved) == ["url"]
    assert remotediff.reverted(None, made, moved) == {
        "url": "/srv/other.git",
        "fetch": [],
        "push": [],
    }
    assert remotediff.reverted(None, made, moved, force=True) is None


def test_a_removal_taken_back_restores_what_it_removed() -> None:
    assert remotediff.reverted(AFTER, BEFORE, BEFORE) == AFTER
    assert remotediff.reverted(AFTER, None, None) == AFTER
