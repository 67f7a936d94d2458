"""The built-in `propose_compaction` tool: the model records one proposal.

Disabled by default; a review's fork-time configuration enables it.  Every
call is validated at once against the source as it stands (read without its
lock: an open review admits no compaction writes, and `--continue`
validates again under the lock).  A valid call's result is the proposal as
the user will be asked to apply it; an invalid one is an error result naming
the numbers, for the model to correct.
"""

from __future__ import annotations

from typing import Any

from gitstore import PROPOSE_COMPACTION
from porcelain.app.query.registry import BuiltinTool, ToolCall, ToolOutcome, builtin
from porcelain.domain.compaction.proposal import (
    PROPOSE_TOOL_DESCRIPTION,
    PROPOSE_TOOL_SCHEMA,
    ProposalError,
    validate_proposal,
)
from porcelain.domain.stream import Stream
from porcelain.models.base import ToolSpec


@builtin(PROPOSE_COMPACTION)
def propose_compaction() -> BuiltinTool:
    return BuiltinTool(
        ToolSpec(PROPOSE_COMPACTION, PROPOSE_TOOL_DESCRIPTION, PROPOSE_TOOL_SCHEMA), run
    )


def run(call: ToolCall, ctx: Any) -> ToolOutcome:
    store = ctx.store
    source_id = store.notes.source_of(ctx.cid)
    if source_id is None:
        return ToolOutcome(
            "this conversation is not a compaction review: it names no source "
            "conversation, so there is nothing to propose a compaction for",
            True,
        )
    if store.refs.locate(source_id) is None:
        return ToolOutcome(
            f"the source conversation {source_id} no longer exists; the user can "
            "close this review with `jp conversation compact --abort`",
            True,
        )
    # its facts found once, for the validation, the report and the rendering
    source = Stream(store.log.load(source_id).events)
    try:
        proposal = validate_proposal(call.arguments, source)
    except ProposalError as exc:
        return ToolOutcome(str(exc), True)
    # the recorded proposal is the validated one (a grown range included); its
    # coverage report goes back to the model, which can mend the text at once
    # lazy: the coverage module loads only once a proposal is valid
    from porcelain.domain.compaction.coverage import coverage

    report = coverage(source, proposal)
    text = "\n".join([proposal.render(source.count), "", *report.lines()])
    return ToolOutcome(
        text, metadata={"proposal": proposal.to_args(), "coverage": report.to_json()}
    )
