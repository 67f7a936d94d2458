"""Templates filled without git: placeholders, defaults, the text after a prompt
without $input, and each misuse one error."""

from __future__ import annotations

import re

import pytest

from porcelain.domain.templates import fill, names
from porcelain.errors import UsageError

REVIEW = {"prompt": "Review for $focus: $input", "system": "Be $tone.", "defaults": {"focus": "bugs"}}


def test_placeholders_defaults_and_parameters() -> None:
    got = fill("review", REVIEW, "code", [("tone", "brief")])
    assert (got.text, got.system, got.model) == ("Review for bugs: code", "Be brief.", None)
    got = fill("review", REVIEW, "code", [("tone", "kind"), ("focus", "speed")])
    assert got.text == "Review for speed: code"
    assert names("a $x ${y} $$z $x") == ["x", "y"]


def test_the_text_follows_a_prompt_without_input() -> None:
    assert fill("t", {"prompt": "Translate:"}, "hola", []).text == "Translate:\n\nhola"
    assert fill("t", {"prompt": "Cost: $$5"}, "", []).text == "Cost: $5"
    assert fill("t", {"model": "anthropic/x"}, "hi", []).model == "anthropic/x"


@pytest.mark.parametrize(
    ("table", "params", "said"),
    [
        (REVIEW, [], "needs a value for tone"),
        (REVIEW, [("tone", "a"), ("colour", "b")], "has no parameter colour"),
        ({"prompt": "costs $5"}, [], "has a $ that is not a placeholder"),
        ({"prompt": "$input"}, [], "makes an empty query"),
    ],
)
def test_misuse_is_an_error_naming_it(
    table: dict[str, object], params: list[tuple[str, str]], said: str
) -> None:
    with pytest.raises(UsageError, match=re.escape(said)):
        fill("t", table, "", params)
