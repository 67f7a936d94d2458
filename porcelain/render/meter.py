"""The context meter's line (stderr) and its JSON."""

from __future__ import annotations

from typing import Any

from porcelain.app.query.meter import Fill


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.0f}k" if tokens >= 10_000 else f"{tokens:,}"


def meter_line(cid: str, model_id: str, fill: Fill) -> str:
    about = "" if fill.counted else "about "
    return (
        f"note: {cid} now fills {about}{fill.share:.0%} of {model_id}'s window "
        f"({_k(fill.tokens)} of {_k(fill.window)} tokens); review a compaction with "
        "`jp conversation compact --interactive` (nothing is compacted without you)"
    )


def meter_json(fill: Fill) -> dict[str, Any]:
    return {
        "tokens": fill.tokens,
        "window": fill.window,
        "share": round(fill.share, 4),
        "counted_by_provider": fill.counted,
    }
