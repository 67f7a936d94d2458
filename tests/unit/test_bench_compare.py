"""bench/compare.py reads back the rows of bench/run.py's table, wall and CPU."""

from __future__ import annotations

import pytest

from bench.common import Row, table
from bench.compare import parse_table


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
