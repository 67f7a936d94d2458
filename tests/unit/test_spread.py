"""The suite's own scheduling (tests/support/spread.py): a spread module's tests fall
into a fixed number of work units, the same ones every run; other modules stay whole."""

from __future__ import annotations

from tests.support.spread import SPREAD, unit

CRASH = "tests/reliability/test_crash.py"


def test_a_spread_module_is_cut_into_its_units_the_same_way_each_run() -> None:
    ids = [f"{CRASH}::test_killed_at_a_fault_point[case{n}]" for n in range(200)]
    units = {unit(i) for i in ids}
    assert units == {f"{CRASH}@{n}" for n in range(SPREAD[CRASH])}
    assert [unit(i) for i in ids] == [unit(i) for i in ids]


def test_other_modules_are_left_to_loadscope() -> None:
    assert unit("tests/e2e/test_query.py::test_x[in-process]") is None
