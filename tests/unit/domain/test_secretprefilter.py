"""``may_hold``, the one search that clears a note before it is parsed and scanned:
it never clears a text whose full scan finds something, however the JSON spells it
(escapes of any character, ``\\/``, either encoder), and it clears plain text."""

from __future__ import annotations

import json
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from porcelain.domain.secretevents import conversation_findings, note_findings
from porcelain.domain.secretscan import RULES, applicable, may_hold
from tests.support.secretcorpus import PLANTED

# every text the scanner flags: each kind's context, and each anchor of each rule
# (a text holding one is asked of the rule, which is what a clear must never skip)
SEEDS = [text for text, _ in PLANTED.values()]
SEEDS += [a for r in RULES for a in r.anchors] + [a.upper() for a in RULES[-1].anchors]
SEEDS += ["API_\u212aEY=Zq8rT2mW9xLp4KvN", "\u0130", "AWS_SECRET_ACCESS_\u212aEY: x"]


def _escaped(text: str, chosen: list[bool], slash: bool) -> str:
    """``text`` as a JSON string whose characters at ``chosen`` are ``\\uXXXX`` escapes
    (a surrogate pair past the BMP), and every ``/`` ``\\/`` when ``slash``."""
    out = []
    for i, char in enumerate(text):
        if i < len(chosen) and chosen[i]:
            units = char.encode("utf-16-be")
            out.append("".join(f"\\u{units[k]:02x}{units[k + 1]:02X}" for k in range(0, len(units), 2)))
        elif slash and char == "/":
            out.append("\\/")
        else:
            out.append(json.dumps(char, ensure_ascii=False)[1:-1])
    return '"' + "".join(out) + '"'


@st.composite
def spelled(draw: st.DrawFn) -> tuple[str, str]:
    """A string holding a planted secret or an anchor among other text, and one JSON
    spelling of it."""
    seed = draw(st.sampled_from(SEEDS)) if draw(st.integers(0, 9)) else ""  # or none
    text = draw(st.text(max_size=20)) + seed + draw(st.text(max_size=20))
    if draw(st.booleans()):  # the line rule reads case as U+212A folds it
        text = text.replace("K", "\u212a") if draw(st.booleans()) else text.replace("k", "\u212a")
    way = draw(st.sampled_from(["plain", "ascii", "escapes"]))
    if way == "plain":
        return text, json.dumps(text, ensure_ascii=False)
    if way == "ascii":
        return text, json.dumps(text)
    chosen = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return text, _escaped(text, chosen, draw(st.booleans()))


@st.composite
def event_json(draw: st.DrawFn) -> str:
    """An event's JSON with the spelled string in a field, deep or not (keys and
    values around it random)."""
    _, literal = draw(spelled())
    path = draw(st.lists(st.sampled_from(["content", "message", "arguments", "metadata", 0]), max_size=3))
    value = "\x00MARK\x00"
    holder: Any = value
    for step in reversed(path):
        holder = [holder] if step == 0 else {step: holder}
    key = draw(st.sampled_from(["content", "message", "reasoning", "attachments"]))
    event = {"type": "chat_request", "timestamp": "2026-01-05T09:30:00Z", key: holder}
    event["extra"] = draw(st.text(max_size=10))
    text = json.dumps(event, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1])))
    return text.replace(json.dumps(value, ensure_ascii=False), literal).replace(json.dumps(value), literal)


@settings(max_examples=600, deadline=None)
@given(event_json())
def test_a_cleared_event_holds_no_finding_and_no_anchor(text: str) -> None:
    event = json.loads(text)
    leaves = json.dumps(event, ensure_ascii=False)  # every decoded string, and more
    if not may_hold(text):
        assert conversation_findings("jp-c1", [event]) == []
        assert applicable(leaves) == ()


@settings(max_examples=400, deadline=None)
@given(st.lists(spelled(), min_size=1, max_size=3), st.sampled_from(["title", "labels"]))
def test_a_cleared_note_holds_no_finding(values: list[tuple[str, str]], key: str) -> None:
    """A note's metadata lines (``{"k": key, "v": value}``) and a plain line."""
    lines = []
    for i, (plain, literal) in enumerate(values):
        if i == 2:
            lines.append(plain.replace("\n", " "))  # a line that is no metadata, scanned whole
        else:
            lines.append(f'{{"k": "{key}", "t": 1, "v": {literal}}}')
    note = "".join(line + "\n" for line in lines)
    found = note_findings("jp-c1", note)
    assert may_hold(note) or not found


def test_every_planted_secret_and_anchor_is_held_in_every_spelling() -> None:
    for seed in SEEDS:
        for literal in (json.dumps(seed), json.dumps(seed, ensure_ascii=False)):
            assert may_hold(literal), seed
        assert may_hold(_escaped(seed, [True] * len(seed), True)), seed
        assert may_hold(_escaped(seed, [], True)), seed  # only ``\/``
        for at in range(len(seed)):  # one character escaped
            assert may_hold(_escaped(seed, [i == at for i in range(len(seed))], False)), seed


def test_plain_words_and_the_usual_escapes_are_cleared() -> None:
    """What the bench's conversations hold, and escapes that spell no anchor."""
    event = {"type": "chat_response", "timestamp": "2025-01-06T09:00:37.000000Z",
             "message": "fakada guquo tacalparte mit shoblobkaing\n\tparkela \u00e9t\u00e9 \u001b[0m \u2028"}  # fmt: skip
    for text in (json.dumps(event), json.dumps(event, ensure_ascii=False, indent=1)):
        assert not may_hold(text)


def test_only_two_characters_lower_to_ascii() -> None:
    """The characters ``may_hold`` looks for beside the escapes: every character
    outside ASCII whose lower case holds an ASCII one."""
    found = [c for c in map(chr, range(0x80, sys.maxunicode + 1)) if any(x.isascii() for x in c.lower())]
    assert found == ["\u0130", "\u212a"]
