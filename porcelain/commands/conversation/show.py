"""`jp conversation show`."""

from __future__ import annotations

from typing import Any

import click

from porcelain.app.describe import details
from porcelain.app.targets import active_id, resolve
from porcelain.commands.context import App
from porcelain.commands.conversation.show_config import effective
from porcelain.domain.origins import origin_rows
from porcelain.render.output import escape_untrusted, untrusted_field


@click.command()
@click.argument("targets", nargs=-1)
@click.option("--no-pager", is_flag=True, help="Never page (long output on a terminal is paged).")
@click.option(
    "--count-tokens",
    is_flag=True,
    help="Ask the conversation's model to count its tokens (where the provider can; "
    "the count is kept until the conversation changes).",
)
@click.pass_obj
def show(app: App, targets: tuple[str, ...], no_pager: bool, count_tokens: bool) -> None:
    """Details of conversations (default: the active one); archived ids work too.

    Tokens are what the model reads of the conversation: counted by the
    provider when it was asked (`--count-tokens`, or a compaction that had
    to decide), else estimated from the text.  Usage is what the provider
    reported it read and wrote, turn by turn.
    """
    store = app.store()
    active = active_id(store)
    infos = []
    for target in targets or (None,):
        loc = resolve(store, target)
        conv = store.log.load(loc.cid)
        if count_tokens:
            _count(app, conv)
        infos.append({**details(store, conv, active), **effective(app, conv)})
    if app.output.emit_json(infos[0] if len(infos) == 1 else infos):
        return
    # lazy: the pager (subprocess) loads only for text output
    from porcelain.render.pager import show_lines

    shown: list[str] = []
    for i, info in enumerate(infos):
        shown += ([""] if i else []) + render(info)
    show_lines(app.output, shown, not no_pager)


def _count(app: App, conv: Any) -> None:
    """Count with the conversation's own model (its recorded configuration)."""
    # lazy: only `show --tokens` loads the counting modules
    from porcelain.app.describe import count_for_show
    from porcelain.app.recorded import conversation_deltas
    from porcelain.domain.defaults import OFFLINE_MODEL
    from porcelain.models.catalog import Catalog

    store = app.store()
    config = app.config(deltas=conversation_deltas(store, conv))
    model_id = config.model_id() or OFFLINE_MODEL
    count_for_show(store, conv, store.notes.source_of(conv.cid), model_id, Catalog.of(config.data))


def render(info: dict[str, Any]) -> list[str]:
    # lazy: the configuration rows load only when `show` prints text
    from porcelain.commands.conversation.show_config import lines as config_rows

    # a title set as a title is text like any other (escaped on a terminal); one that
    # is a prompt's first words is escaped whole, piped or not, as ls shows it
    title = str(info["shown_title"])
    if not info.get("title"):
        title = escape_untrusted(title, one_line=True)
    rows = [("ID", info["id"]), ("Title", title)]
    rows += [("Turns", f"{info['turns']:,}"), ("Events", f"{info['events']:,}")]
    if info["last_event_at"]:
        rows.append(("Latest event", info["last_event_at"]))
    rows.append(("State", "archived" if info["archived"] else "live"))
    rows.append(("Active", "yes" if info["active"] else "no"))
    rows.append(("Pinned", "yes" if info["pinned"] else "no"))
    if "model" in info:
        rows += config_rows(info)
    if info["labels"]:
        rows.append(
            ("Labels", ", ".join(f"{k}={v}" if v else k for k, v in info["labels"].items()))
        )
    if info["source_id"]:
        rows.append(("Reviews", info["source_id"]))
    if info.get("tokens"):
        rows.append(("Tokens", _tokens_label(info["tokens"])))
    rows += origin_rows(info)
    lines = [f"{k + ':':<14}{untrusted_field(v)}" for k, v in rows]
    if info["compactions"]:
        lines.append("Compactions:")
        for n, item in enumerate(info["compactions"], 1):
            lines.append(f"  {n}. {describe_json_overlay(item)}")
    if info["source_id"]:
        proposal = info.get("proposal")
        if proposal is None:
            lines.append("Proposal:     none yet")
        else:
            lines.append("Proposal:     " + describe_json_overlay(proposal))
            if proposal.get("summary"):
                lines += ["", *("  " + ln for ln in str(proposal["summary"]).splitlines())]
            if proposal.get("coverage"):
                # lazy: the coverage report loads only for a review with a proposal
                from porcelain.domain.compaction.coverage import Coverage

                report = Coverage.from_json(proposal["coverage"]).lines()
                lines += ["", *("  " + untrusted_field(ln) for ln in report)]
    return lines


def _tokens_label(tokens: dict[str, Any]) -> str:
    # lazy: only a show with a token count reads one
    from porcelain.domain.token_count import TokenCount

    found = TokenCount.from_json(tokens)
    return found.label() if found is not None else "unknown"


def describe_json_overlay(item: dict[str, Any]) -> str:
    """`turns 2-8 (reasoning + tools)` from a show/proposal JSON item."""
    a, b = item["from_turn"], item["to_turn"]
    parts = []
    if item.get("summary"):
        parts.append("summary")
    else:
        if item.get("reasoning"):
            parts.append("reasoning")
        tools = item.get("tool_calls")
        if tools:
            parts.append({"strip": "tools", "omit": "tools omitted"}.get(tools, tools))
    span = f"turn {a}" if a == b else f"turns {a}-{b}"
    return f"{span} ({' + '.join(parts)})" if parts else span
