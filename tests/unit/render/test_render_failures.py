"""Each typed error of the store becomes one message with its hint; a bug stays a bug."""

from __future__ import annotations

import errno

import pytest

from gitstore import errors
from porcelain.errors import FaultError, UserError
from porcelain.render.failures import translate

CID = "jp-c17727391057"
CASES: list[tuple[BaseException, str, str | None]] = [
    (errors.InvalidId("x!"), "not a conversation id: 'x!'", "ids look like"),
    (errors.ConversationNotFound(CID), f"no conversation {CID}", "jp conversation ls"),
    (errors.ConversationExists(CID), f"conversation {CID} already exists", None),
    (errors.ConversationBusy(CID), f"conversation {CID} is in use", "jp conversation fork"),
    (errors.RefLocked(CID, "a" * 40, "/s/refs/x.lock"), f"conversation {CID} is locked", "doctor"),
    (errors.LockedRef("refs/x", "/s/refs/x.lock", 7300.0), "refs/x is locked", None),
    (errors.StaleTip(CID, "a" * 40, "b" * 40), "changed by another writer", "run the command again"),
    (errors.ConcurrentUpdate("refs/x"), "refs/x kept changing", "jp op log"),
    (errors.NothingToUndo(), "nothing to undo", "jp op log"),
    (errors.RefBusy("refs/x", "/s/packed-refs.lock", by_maintenance=True), "git's maintenance", None),
    (errors.RefBusy("refs/x", "/s/refs/x.lock", partial=True), "it is half done", None),
]


@pytest.mark.parametrize(("exc", "message", "hint"), CASES, ids=lambda c: type(c).__name__)
def test_a_store_error_reads_as_one_message_and_its_hint(
    exc: BaseException, message: str, hint: str | None
) -> None:
    found = translate(exc)
    assert isinstance(found, UserError)
    assert message in found.message
    if hint is not None:
        assert hint in (found.hint or "")


def test_a_subclass_is_told_apart_from_its_base() -> None:
    locked = translate(errors.RefLocked(CID, "a" * 40, "/s/refs/x.lock"))
    stale = translate(errors.StaleTip(CID, "a" * 40, None))
    assert locked is not None and stale is not None
    assert "locked" in locked.message and "locked" not in stale.message


def test_a_full_disk_is_the_machines_fault_and_a_bug_is_none() -> None:
    full = translate(OSError(errno.ENOSPC, "No space left on device"))
    assert isinstance(full, FaultError) and "no space left" in full.message
    assert translate(KeyError("a bug")) is None
    assert translate(KeyError("a bug")) is None


@pytest.mark.parametrize(
    "exc",
    [
        errors.RefBusy("refs/x", "/s/refs/x.lock"),
        errors.RefBusy("refs/x", "/s/packed-refs.lock", by_maintenance=True),
        errors.LockedRef("refs/x", "/s/refs/x.lock", 30.0),
        errors.RefLocked(CID, "a" * 40, "/s/refs/x.lock"),
    ],
    ids=lambda c: type(c).__name__,
)
def test_every_lock_left_behind_is_named_with_the_command_that_removes_it(
    exc: BaseException,
) -> None:
    """A creation, an append, a note: one rule, one command (``jp doctor --fix``)."""
    found = translate(exc)
    said = f"{found.message} {found.hint or ''}"
    assert "`jp doctor --fix` removes" in said, said
    assert "names the stale lock" not in said
