"""Range flags the conversation cannot have are usage errors naming the valid range."""

from __future__ import annotations

import pytest

from porcelain.domain.compaction.rangecheck import check_range_flags, typed_range
from porcelain.domain.compaction.ranges import parse_range_overrides
from porcelain.errors import UsageError

BAD = [
    ({"from_": "3", "to": "2"}, "is after --to 2"),
    ({"from_": "99"}, "--from 99 is outside"),
    ({"to": "6"}, "--to 6 is outside"),
    ({"from_": "-9"}, "--from -9 is outside"),
    ({"keep_first": "-2"}, "cannot be negative"),
    ({"keep_last": "-1"}, "cannot be negative"),
]


@pytest.mark.parametrize(("flags", "said"), BAD)
def test_bad_ranges_name_the_valid_range(flags: dict[str, str], said: str) -> None:
    overrides = parse_range_overrides(**flags)
    with pytest.raises(UsageError) as caught:
        check_range_flags(overrides, 5, typed_range(flags))
    assert said in str(caught.value) and "turns 1-5" in str(caught.value)


@pytest.mark.parametrize(
    "flags",
    [
        {"from_": "2", "to": "5"},
        {"from_": "-1"},
        {"keep_first": "2"},
        {"keep_last": "9"},
        {"to": "2h"},
    ],
)
def test_good_ranges_pass(flags: dict[str, str]) -> None:
    check_range_flags(parse_range_overrides(**flags), 5, typed_range(flags))
