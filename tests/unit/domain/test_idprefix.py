"""Ids typed short: prefixes with or without ``jp-c``, ambiguity, shortest unique prefixes."""

from __future__ import annotations

import pytest

from porcelain.domain import idprefix

IDS = ["jp-c17727391057", "jp-c17727484633", "jp-c17800000102", "jp-c178-ab"]


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("jp-c177273", "jp-c17727391057"),
        ("177273", "jp-c17727391057"),
        ("c177274", "jp-c17727484633"),
        ("17800", "jp-c17800000102"),
        ("178-a", "jp-c178-ab"),
        ("jp-c17727391057", "jp-c17727391057"),
    ],
)
def test_a_unique_prefix_names_its_id(typed: str, expected: str) -> None:
    assert idprefix.pick(typed, IDS) == expected


def test_an_ambiguous_prefix_lists_every_candidate() -> None:
    for typed in ("jp-c17727", "17727"):
        with pytest.raises(idprefix.Ambiguous) as caught:
            idprefix.pick(typed, IDS)
        assert caught.value.candidates == ["jp-c17727391057", "jp-c17727484633"]


def test_an_exact_id_wins_over_the_longer_ids_it_is_a_prefix_of() -> None:
    assert idprefix.pick("jp-c12", ["jp-c12", "jp-c123", "jp-c1234"]) == "jp-c12"
    with pytest.raises(idprefix.Ambiguous):
        idprefix.pick("jp-c1", ["jp-c12", "jp-c123"])


def test_no_match_is_none() -> None:
    assert idprefix.pick("999", IDS) is None
    assert idprefix.pick("177", []) is None


@pytest.mark.parametrize(
    "hostile", ["", "jp-c", "../x", "1/2", "17727\n", "jp-c17727 x", "1" * 80, "ABC", "-1", "c"]
)
def test_text_that_is_no_prefix_of_an_id_is_refused(hostile: str) -> None:
    assert idprefix.normalize(hostile) is None
    assert idprefix.matches(hostile, IDS) == []


def test_unique_lengths_are_the_shortest_prefixes_no_other_id_shares() -> None:
    lengths = idprefix.unique_lengths(IDS)
    assert {cid: cid[:n] for cid, n in lengths.items()} == {
        "jp-c17727391057": "jp-c177273",
        "jp-c17727484633": "jp-c177274",
        "jp-c17800000102": "jp-c1780",
        "jp-c178-ab": "jp-c178-",
    }
    for cid, n in lengths.items():  # each shortest prefix names its own id
        assert idprefix.pick(cid[:n], IDS) == cid
        assert n == len(cid) or len(idprefix.matches(cid[: n - 1], IDS)) > 1 or n == 5


def test_an_id_that_is_a_prefix_of_another_is_shown_whole() -> None:
    assert idprefix.unique_lengths(["jp-c12", "jp-c123"]) == {"jp-c12": 6, "jp-c123": 7}
    assert idprefix.unique_lengths(["jp-c5"]) == {"jp-c5": 5}


def test_candidates_are_cut_in_an_error_line() -> None:
    many = [f"jp-c{n}" for n in range(100, 120)]
    text = idprefix.describe_candidates(many, limit=3)
    assert text == "jp-c100, jp-c101, jp-c102 and 17 more"


def test_one_ids_length_from_its_neighbours_is_the_whole_answer() -> None:
    pool = sorted([*IDS, "jp-c12", "jp-c123", "jp-c5"])
    every = idprefix.unique_lengths(pool)
    for i, cid in enumerate(pool):
        before = pool[i - 1] if i else None
        after = pool[i + 1] if i + 1 < len(pool) else None
        assert idprefix.unique_length(cid, before, after) == every[cid]


def test_handles_are_the_shortest_unshared_start_of_the_hex_suffix() -> None:
    ids = [
        "jp-c17966001234-3fa9c0ffee",
        "jp-c17966001234-3fa1000000",
        "jp-c17966001234-b00000000a",
        "jp-c17966001234-b00000000a".replace("jp-c17966001234", "jp-c17966001299"),
        "jp-c17966001235-1796aaaaaa",
        "jp-c17727391057",
    ]
    got = idprefix.handles(ids)
    assert got["jp-c17966001234-3fa9c0ffee"] == "3fa9"
    assert got["jp-c17966001234-3fa1000000"] == "3fa1"
    assert "jp-c17966001234-b00000000a" not in got  # the same suffix twice: no handle
    assert got["jp-c17966001235-1796aaaaaa"] == "1796a"  # 1796 starts an id: one more
    assert "jp-c17727391057" not in got
    assert idprefix.pick("3fa9", ids) == "jp-c17966001234-3fa9c0ffee"
    assert idprefix.pick("3fa9c0ffee", ids) == "jp-c17966001234-3fa9c0ffee"
    with pytest.raises(idprefix.Ambiguous):
        idprefix.pick("1796", ids)  # a prefix of ids and a handle at once
    assert idprefix.pick("abc", ids) is None  # three digits: no handle
    assert idprefix.pick("17727", ids) == "jp-c17727391057"  # a prefix is still a prefix
