"""bench/compare.py reads back the rows of bench/run.py's table, wall and CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.common import Row, table
from bench.compare import Side, parse_table, report


def test_the_run_table_reads_back_as_wall_and_cpu_per_row() -> None:
    rows = [
        Row("load, warm", 0.0421, "read events.json", 0.0308, cpu=0.0424, base_cpu=0.0335),
        Row("import 16 JP conversations (1,667 events)", 1.01, cpu=1.2),
        Row("store size", 2.0**20, unit="B"),
    ]
    parsed = parse_table(table(rows))
    assert parsed["load, warm"] == pytest.approx((0.0421, 0.0424))
    assert parsed["import 16 JP conversations (1,667 events)"] == pytest.approx((1.01, 1.2))
    assert "store size" not in parsed  # sizes are not times


def test_counted_instructions_add_their_own_columns(tmp_path: Path) -> None:
    old = Side("old", tmp_path, "python", tmp_path)
    new = Side("new", tmp_path, "python", tmp_path)
    for side, cpu in ((old, 0.1), (new, 0.2)):
        side.samples["jp --help"] = [(0.3, cpu)]
        side.samples["python -c pass"] = [(0.1, 0.02)]
    old.instructions["jp --help"] = 200_000_000
    new.instructions["jp --help"] = 190_000_000
    lines = report(old, new, ["jp --help", "python -c pass"]).splitlines()
    assert lines[0].endswith("| instructions, old / new | new / old, instructions |")
    assert lines[2].endswith("| 2.00x | 1 | 200 M / 190 M | 0.950x |")
    assert lines[3].endswith("| 1.00x | 1 | - | - |")  # a row not counted
    plain = report(Side("o", tmp_path, "python", tmp_path), new, []).splitlines()
    assert "instructions" not in plain[0]
