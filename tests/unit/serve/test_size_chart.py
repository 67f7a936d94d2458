"""The size chart: counts an imported session recorded are counted, not estimated;
the y axis has round, labelled steps; no label runs off the drawing."""

from __future__ import annotations

import re

from porcelain.serve.pages.size import points, svg


def turn(n: int, usage: dict[str, int] | None) -> list[dict[str, object]]:
    record = {"type": "assistant", "message": {"id": f"m{n}", "usage": usage}} if usage else None
    answer: dict[str, object] = {"type": "chat_response", "message": "x" * 400}
    if record:
        answer["metadata"] = {"source_record": record}
    return [{"type": "turn_start"}, {"type": "chat_request", "content": "q"}, answer]


def test_an_imported_sessions_recorded_counts_are_counted() -> None:
    usage = {"input_tokens": 10, "cache_read_input_tokens": 30_000, "output_tokens": 500}
    turns, _ = points([*turn(0, usage), *turn(1, None)])
    assert turns[0] == {"turn": 1, "tokens": 30_510, "counted": True}
    assert turns[1]["counted"] is False


def test_the_y_axis_is_labelled_in_round_steps_and_labels_stay_inside() -> None:
    data = {
        "turns": [{"turn": t, "tokens": t * 9_000, "counted": True} for t in range(1, 41)],
        "window": 200_000,
        "model": "anthropic/claude",
        "compactions": [{"turn": 40, "from_turn": 2, "to_turn": 39}],
    }
    drawn = svg(data)
    labels = re.findall(r'text-anchor="end">([^<]+)</text>', drawn)
    assert {"0", "100k", "200k", "300k", "400k"} <= set(labels)  # up to 360k, rounded up
    for x in re.findall(r'<text x="([-\d.]+)"', drawn):
        assert 0 <= float(x) <= 900
    assert 'text-anchor="end">compacted 2-39' in drawn  # at the right edge: drawn leftwards
