"""A session's conversation id: the same for the same session on every machine, another
for another session or agent, and one the acceptance id rule accepts."""

from __future__ import annotations

from gitstore import ids
from porcelain.domain.sessionident import session_cid


def test_the_same_session_gives_the_same_id_and_others_differ() -> None:
    one = session_cid("claude-code", "3fb7", None, "2026-01-15T17:24:23.966Z")
    assert one == session_cid("claude-code", "3fb7", None, "2026-01-15T17:24:23.966Z")
    assert one is not None and ids.is_valid(one) and one.startswith("jp-c17684978639-")
    others = {
        session_cid("codex", "3fb7", None, "2026-01-15T17:24:23.966Z"),
        session_cid("claude-code", "3fb8", None, "2026-01-15T17:24:23.966Z"),
        session_cid("claude-code", "3fb7", "a1", "2026-01-15T17:24:23.966Z"),
    }
    assert one not in others and len(others) == 3


def test_a_time_that_does_not_parse_gives_none() -> None:
    assert session_cid("claude-code", "s", None, "yesterday") is None
    assert session_cid("claude-code", "s", None, "1960-01-01T00:00:00Z") is None
