"""`jp conversation compact`: overlays, resets, and the interactive review."""

from __future__ import annotations

from typing import Any

import click

from porcelain.commands.context import App
from porcelain.commands.conversation import compact_flows as flows
from porcelain.commands.conversation.compact_options import RANGE_FLAGS, CompactOptions
from porcelain.commands.options import compact_specs
from porcelain.commands.optvalue import Command, OptionalValue
from porcelain.domain.compaction.overlays import TOOL_MODE_WORDS
from porcelain.errors import UsageError, UserError


@click.command(cls=Command)
@click.argument("target", nargs=-1)
@click.option(
    "--from",
    "from_",
    metavar="N",
    help="First turn to compact (1-based; -1 = last; a duration like 5h; last-compaction).",
)
@click.option(
    "--to", metavar="N", help="Last turn to compact (1-based; -N from the end; a duration)."
)
@click.option("--keep-first", metavar="N", help="Leave the first N turns alone.")
@click.option("--keep-last", metavar="N", help="Leave the last N turns alone.")
@click.option("--first", metavar="N", help="Compact only the first N turns.")
@click.option("--last", metavar="N", help="Compact only the last N turns.")
@click.option("--turn", metavar="N|A..B", help="Compact these turns (1-based, inclusive).")
@click.option(
    "-s",
    "--summarize",
    cls=OptionalValue,
    flag_value="",
    default=None,
    metavar="[TEXT]",
    help="Replace the range with a summary (TEXT: extra guidance for the summarizer).",
)
@click.option("-r", "--reasoning", is_flag=True, help="Strip reasoning in the range.")
@click.option(
    "-t",
    "--tools",
    cls=OptionalValue,
    words=TOOL_MODE_WORDS,
    flag_value="strip",
    default=None,
    metavar="[MODE]",
    help="Tool calls in the range: strip (default), strip-requests, strip-responses, omit.",
)
@compact_specs
@click.option(
    "-m", "--model", metavar="PROVIDER/NAME", help="Model for summaries (and the review)."
)
@click.option(
    "--dry-run", is_flag=True, help="Show what would happen; write nothing, call no model."
)
@click.option(
    "--reset",
    cls=OptionalValue,
    flag_value="all",
    default=None,
    metavar="[=N]",
    help="Withdraw all compactions, or the N-th (as `show` numbers them); history is kept.",
)
@click.option(
    "-i",
    "--interactive",
    is_flag=True,
    help="Review the compaction with the model in a new review conversation.",
)
@click.option("--continue", "continue_", is_flag=True, help="Apply the active review's proposal.")
@click.option("--abort", is_flag=True, help="End the active review without applying anything.")
@click.option("--log", "log", is_flag=True, help="List the active review's proposals.")
@click.option(
    "--diff", is_flag=True, help="Compare two proposals of the active review: --diff [A [B]]."
)
@click.option("-y", "--yes", "--no-confirm", "yes", is_flag=True, help="Do not ask.")
@click.option("--confirm", is_flag=True, help="Ask even when --yes is configured.")
@click.pass_obj
def compact(app: App, /, target: tuple[str, ...], **flags: Any) -> None:
    """Compact a conversation's context without rewriting its history.

    Compactions are `compaction` events appended to the conversation: the
    model is then sent summaries, or turns without reasoning and tool output,
    while every original event stays in git.  Without flags the configured
    rules apply (built-in: strip reasoning and tool calls, keeping the first
    and last turn).

    \b
    Review a compaction with the model, the way `git rebase -i` works:
      jp conversation compact --interactive [--from N --to N]
      jp q "keep the retry decision; stop at turn 15"
      jp conversation compact --continue      (or --abort)
      jp conversation compact --log / --diff [A [B]]   (its proposals)
    """
    # lazy: only a review loads the review modules
    from porcelain.commands.conversation import review_flows as review

    opts = CompactOptions.of(flags)
    if opts.log or opts.diff:
        # lazy: only --log/--diff read a review's proposals
        from porcelain.commands.conversation.compact_history import show_history

        if opts.log and opts.diff:
            raise UsageError("--log and --diff do not go together")
        show_history(app, diff=opts.diff, numbers=target)
        return
    if len(target) > 1:
        raise UsageError(f"compact takes one conversation id, got {len(target)}")
    one = target[0] if target else None
    if opts.continue_ or opts.abort:
        _refuse_for_finish(one, opts)
        review.finish(app, abort=opts.abort, yes=opts.confirmed(app.yes))
    elif opts.interactive:
        _refuse_for_interactive(opts)
        review.interactive(app, one, opts)
    elif opts.reset is not None:
        _refuse_for_reset(opts, opts.reset)
        flows.reset(app, one, opts.reset, opts.dry_run, opts.confirmed(app.yes))
    else:
        check_policies(opts)
        flows.run(app, one, opts)


def _refuse_for_finish(target: str | None, opts: CompactOptions) -> None:
    flag = "--continue" if opts.continue_ else "--abort"
    if opts.continue_ and opts.abort:
        raise UsageError("--continue and --abort do not go together")
    if target is not None:
        raise UsageError(
            f"{flag} takes no conversation id: it acts on the active review",
            "switch to the review first: `jp conversation use ID`",
        )
    other = opts.given(
        (
            *RANGE_FLAGS,
            "summarize",
            "reasoning",
            "tools",
            "specs",
            "model",
            "dry_run",
            "reset",
            "interactive",
        ),
    )
    if other:
        raise UsageError(
            f"{flag} does not take {', '.join(other)}",
            "the range and the policies are negotiated in the review",
        )


def _refuse_for_interactive(opts: CompactOptions) -> None:
    bad = opts.given(("reasoning", "tools", "dry_run", "reset", "specs", "summarize"))
    if bad == ["--dry-run"]:
        raise UsageError(
            "--interactive does not go with --dry-run: a review writes a review conversation",
            "preview a compaction with `jp conversation compact --dry-run`; "
            "`--abort` ends a review without touching the source",
        )
    if bad:
        raise UsageError(
            f"--interactive does not go with {', '.join(bad)}",
            "the policies are negotiated inside the review",
        )


def _refuse_for_reset(opts: CompactOptions, value: str) -> None:
    bad = opts.given((*RANGE_FLAGS, "summarize", "reasoning", "tools", "specs", "model"))
    if bad:
        raise UsageError(f"--reset does not go with {', '.join(bad)}")
    if value != "all" and (not value.isdigit() or int(value) < 1):
        raise UsageError(
            f"--reset takes a compaction number from 1 (as `show` lists them), got {value!r}",
            "write --reset for all of them, or --reset=N for one",
        )


def check_policies(opts: CompactOptions) -> None:
    policy = opts.given(("summarize", "reasoning", "tools"))
    if policy and opts.specs:
        raise UsageError(f"{', '.join(policy)} and -k do not go together")
    if opts.first is not None and opts.last is not None:
        raise UserError("--first and --last do not go together")
