"""`compact --log` and `compact --diff`: the active review's proposals, listed and compared."""

from __future__ import annotations

from collections.abc import Sequence

from porcelain.commands.context import App
from porcelain.errors import UsageError


def show_history(app: App, *, diff: bool, numbers: Sequence[str]) -> None:
    # lazy: the review modules load only for --log/--diff
    from porcelain.app.review.finish import active_review

    # lazy: the review modules load only for --log/--diff
    from porcelain.app.review.revisions import diff_json, diff_lines, log_line, pick, revisions

    if not diff and numbers:
        raise UsageError("--log takes no arguments: it lists every proposal of the active review")
    if len(numbers) > 2:
        raise UsageError(
            "--diff compares two proposals: `--diff [A [B]]`",
            "list them with `jp conversation compact --log`",
        )
    store = app.store()
    rid, source_id = active_review(store)
    source = store.log.load(source_id).events if store.refs.locate(source_id) is not None else None
    found = revisions(store.log.load(rid).events, source)
    out = app.output
    if diff:
        a, b = pick(found, numbers)
        out.emit(diff_json(a, b), lambda: out.lines(diff_lines(a, b)))
        return
    if out.emit_json([r.to_json() for r in found]):
        return
    if not found:
        out.line(f"Review {rid} of {source_id} holds no proposal yet.")
        return
    out.line(f"Proposals of review {rid} (source {source_id}), oldest first:")
    out.lines([log_line(r) for r in found])
    if len(found) > 1:
        out.line(
            "Compare two with `jp conversation compact --diff [A [B]]` (default: the last two)."
        )
