"""What `jp conversation show` says about configuration: the model the
conversation's next query uses (and which layer chose it), and the keys the
conversation itself records (its `config_delta` events, after the trust rule)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from porcelain.config.explain import dotted_key, toml_value
from porcelain.domain.defaults import default_model
from porcelain.domain.token_usage import per_turn, summary_line

if TYPE_CHECKING:
    from gitstore import Conversation
    from porcelain.commands.context import App

MODEL_KEY = ("assistant", "model", "id")


def effective(app: App, conv: Conversation) -> dict[str, Any]:
    """``{"model": {"id", "source"}, "conversation_sets": {dotted key: value}}``."""
    # lazy: the recorded configuration loads only when `show` reads it
    from porcelain.app.recorded import conversation_deltas
    from porcelain.app.usage import conversation_total

    deltas = conversation_deltas(app.store(), conv)
    merged = app.config(deltas=deltas, warn=False)
    own = f"conversation {conv.cid} "
    sets = {dotted_key(p): v for p, v, source in merged.entries() if source.startswith(own)}
    model = merged.model_id()
    if model:
        source = merged.origin(MODEL_KEY)
    else:
        model, source = default_model(app.has_api_key()), "default: no model configured"
    return {
        "model": {"id": model, "source": source},
        "conversation_sets": sets,
        "usage": per_turn(conv.events),
        "usage_total": conversation_total(conv, app.environ),
    }


def lines(info: dict[str, Any]) -> list[tuple[str, str]]:
    """The rows of `show` for ``effective``'s answer (values are untrusted)."""
    model = info["model"]
    rows = [("Model", f"{model['id']}, from {model['source']}")]
    sets = info["conversation_sets"]
    rows.append(
        (
            "Recorded",
            ", ".join(f"{k} = {_brief(v)}" for k, v in sets.items()) if sets else "nothing",
        )
    )
    if info.get("usage"):
        rows.append(("Usage", summary_line(info["usage"])))
    if info.get("usage_total"):
        rows.append(("Spent", spent_line(info["usage_total"])))
    return rows


BRIEF = 60  # a recorded text longer than this shows its start and its length


def _brief(value: Any) -> str:
    """A recorded value as TOML, a long text (a review's whole instructions) cut to
    its first words and its length: `show` is a summary, `-F json` has it whole."""
    if not isinstance(value, str) or (len(value) <= BRIEF and "\n" not in value):
        return toml_value(value)
    start = " ".join(value.split())[:BRIEF].rsplit(" ", 1)[0]
    return f"{toml_value(start + '...')} ({len(value):,} characters)"


def spent_line(total: dict[str, Any]) -> str:
    """`in 1,200, out 70, cache write 0, cache read 0: $0.0031 (MODEL)` (`jp usage`'s count)."""
    # lazy: as the rest of `show`'s usage
    from porcelain.render.usageview import cost

    counts = (
        f"in {total['input_tokens']:,}, out {total['output_tokens']:,}, "
        f"cache write {total['cache_creation_tokens']:,}, "
        f"cache read {total['cache_read_tokens']:,}"
    )
    return f"{counts}: {cost(total['cost_usd'])} ({', '.join(total['models'])})"
