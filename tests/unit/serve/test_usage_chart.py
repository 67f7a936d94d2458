"""The usage chart: a day's segments stack to its total on the axis's scale, a day
of a few tokens still shows, a model's name is text in its tooltip."""

from __future__ import annotations

import re
from typing import Any

from porcelain.serve.pages.usage import PAD, H, _colours, svg


def day(period: str, parts: dict[str, int]) -> dict[str, Any]:
    breakdown = [
        {"model": m, "total_tokens": n, "cost_usd": None, "unpriced_models": [m]}
        for m, n in parts.items()
    ]
    return {"period": period, "total_tokens": sum(parts.values()), "breakdown": breakdown}


def bars(drawing: str) -> list[tuple[float, float]]:
    return [
        (float(y), float(h))
        for y, h in re.findall(r'<rect[^>]* y="([\d.]+)"[^>]* height="([\d.]+)"', drawing)
    ]


def test_segments_stack_to_the_days_total() -> None:
    rows = [
        day("2026-03-01", {"a": 3000, "b": 1000}),
        day("2026-03-02", {"<b>x</b>": 4}),
        day("2026-03-03", {"a": 0}),
    ]
    drawing = svg(rows, _colours(rows))
    (y1, h1), (y2, h2), (y3, h3) = bars(drawing)  # the empty model draws nothing
    assert abs(y1 + h1 - (H - PAD)) < 0.2 and abs(y2 + h2 - y1) < 0.2  # b sits on a
    assert abs(h1 / h2 - 3) < 0.01  # 3000 against 1000
    assert h3 == 1  # four tokens: too few for a pixel, drawn as one
    assert "&lt;b&gt;x&lt;/b&gt;" in drawing and "<b>" not in drawing
    assert "2026-03-01 · a: 3,000 tokens, no price (a)" in drawing
