"""The scanner: every planted kind found and redacted, no value in a finding, the
allow-list, and plain text left alone."""

from __future__ import annotations

import json

import pytest

from porcelain.domain.secretevents import (
    AllowList,
    conversation_findings,
    note_findings,
    redact_event,
    redact_note,
    redact_value,
)
from porcelain.domain.secretscan import KINDS, RULES, Rule, applicable, digest, redact, scan
from tests.support.secretcorpus import PLANTED, PRIVATE_KEY


def test_the_corpus_plants_every_kind_and_at_least_twenty() -> None:
    assert set(PLANTED) == set(KINDS) and len(KINDS) >= 20


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_each_planted_secret_is_found_as_its_kind_and_redacted(kind: str) -> None:
    text, value = PLANTED[kind]
    found = scan(text)
    assert [f.kind for f in found] == [kind]
    out = redact(text, found)
    assert value not in out and f"[redacted: {kind}]" in out
    f = found[0]
    assert value not in repr(f) + str(f) + json.dumps(f.__dict__)
    assert f.digest.startswith("sha256:") and len(f.preview) < 40


def test_plain_text_placeholders_and_hashes_are_not_secrets() -> None:
    benign = [
        "PASSWORD=changeme\nAPI_KEY=${API_KEY}\nTOKEN=<your token>\nSECRET_KEY=xxxxxxxx",
        "see https://user@example.com/path and git@github.com:org/repo.git",
        "commit 3f9a2c4e5b6d7f8091a2b3c4d5e6f708192a3b4c, sha256 " + "ab" * 32,
        "postgres://user:${PGPASSWORD}@localhost/db",
        "sort_key = lambda row: row.id\nauth_token = get_token()\n",
        "the sk-learn docs; a risk-adjusted task-runner",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
    ]
    for text in benign:
        assert scan(text) == [], text


def test_a_password_with_at_and_hash_in_a_url_is_taken_whole() -> None:
    text = "DATABASE_URL=postgres://admin:Vq7!rT2#mZ9pLx4@wN@db.internal:5432/prod"
    out = redact(text, scan(text))
    assert "Vq7" not in out and "wN" not in out and "@db.internal" in out


def test_a_private_key_inside_json_escaped_text_is_found() -> None:
    text = json.dumps({"stdout": PRIVATE_KEY})
    assert [f.kind for f in scan(text)] == ["private key"]


def test_events_every_string_is_scanned_and_redacted_in_place() -> None:
    text, value = PLANTED["github token"]
    events = [
        {"type": "turn_start", "timestamp": "t"},
        {"type": "tool_call_request", "timestamp": "t", "id": "1", "name": "sh", "arguments": {"cmd": text}},
        {"type": "chat_response", "timestamp": "t", "message": "ok",
         "metadata": {"source": {"message": {"content": [{"type": "text", "text": text}]}}}},
    ]  # fmt: skip
    found = conversation_findings("jp-c1", events)
    assert [(f.turn, f.event, f.path) for f in found] == [
        (1, 1, "arguments.cmd"),
        (1, 2, "metadata.source.message.content[0].text"),
    ]
    for i, event in enumerate(events):
        mine = [f for f in found if f.event == i]
        out = json.dumps(redact_event(event, mine))
        assert value not in out
    assert value not in json.dumps([f.as_json() for f in found])


def test_the_allow_list_by_kind_hash_and_conversation() -> None:
    text, value = PLANTED["jwt"]
    events = [{"type": "chat_request", "timestamp": "t", "content": text}]
    assert conversation_findings("jp-c1", events)
    by_kind = AllowList.of({"kinds": ["jwt"]})
    by_hash = AllowList.of({"hashes": [scan(text)[0].digest]})
    by_conversation = AllowList.of({"conversations": ["jp-c1"]})
    for allow in (by_kind, by_hash, by_conversation):
        assert conversation_findings("jp-c1", events, allow) == []
    assert conversation_findings("jp-c2", events, by_conversation)
    assert digest(value) != scan(text)[0].digest  # the hash is of the whole finding
    assert AllowList.of("kinds = ['jwt']") == AllowList() and AllowList.of({"kinds": "jwt"}) == AllowList()


def test_json_escaped_text_and_code_that_names_keys() -> None:
    text, value = PLANTED["sendgrid api key"]
    escaped = json.dumps({"output": f"ok\n{text}\nAPI_TOKEN=Zx9Cv8Bn7Mq6Wr5\n"})
    assert [f.kind for f in scan(escaped)] == ["sendgrid api key", "env secret"]
    code = (
        "env.OPENAI_API_KEY = env.ANTHROPIC_API_KEY;\n  author_name: author_name,\n"
        "  apiKey: 'proxy-handled',\n"
    )
    assert scan(code) == []


def test_a_long_line_with_many_anchors_is_read_once() -> None:
    line = "input_tokens=1 " * 20000 + "SECRET_KEY=Zq8Wx7Cv6Bn5Ml4K"
    assert [f.kind for f in scan(line)] == []  # not at a line's start
    assert [f.kind for f in scan(line + "\nSECRET_KEY=Zq8Wx7Cv6Bn5Ml4K")] == ["env secret"]


def test_a_notes_every_value_is_scanned_and_redacted_in_its_line_alone() -> None:
    token, key = PLANTED["github token"][1], PLANTED["stripe key"][1]
    lines = [
        json.dumps({"k": "title", "v": f"see {token}", "t": 1, "m": "a"}, sort_keys=True),
        json.dumps({"k": "title", "v": "clean now", "t": 2, "m": "a"}, sort_keys=True),
        json.dumps({"k": "labels", "v": {"db": key}, "t": 3, "m": "a"}, sort_keys=True),
        "",
        f"not a metadata line {token}",
    ]
    text = "\n".join(lines) + "\n"
    found = note_findings("jp-c1", text)
    assert [(f.path, f.kind) for f in found] == [
        ("meta.title", "github token"), ("meta.labels.db", "stripe key"), ("note", "github token"),
    ]  # fmt: skip
    out = redact_note(text, found)
    assert token not in out and key not in out
    kept = out.splitlines()
    assert kept[1] == lines[1], "a line without a finding is kept byte for byte"
    assert json.loads(kept[0]) == {"k": "title", "v": "see [redacted: github token]", "t": 1, "m": "a"}
    assert kept[3] == "not a metadata line [redacted: github token]"
    assert note_findings("jp-c1", text, AllowList(conversations=frozenset({"jp-c1"}))) == []


def test_every_string_of_a_value_keys_included_is_masked_and_counted() -> None:
    token, key = PLANTED["github token"][1], PLANTED["stripe key"][1]
    value = {"title": f"deploy {token}", "labels": {key: "x"}, "turns": [3, (f"a {key}", None)], "n": 4}
    shown, found = redact_value(value)
    assert found == {"github token": 1, "stripe key": 2} and token not in json.dumps(shown) and key not in json.dumps(shown)
    assert shown["title"] == "deploy [redacted: github token]" and shown["n"] == 4
    assert shown["turns"][1] == ("a [redacted: stripe key]", None)
    assert redact_value({"plain": ["text", 1]}) == ({"plain": ["text", 1]}, {})
    kept, found = redact_value(value, AllowList(kinds=frozenset({"stripe key"})))
    assert found == {"github token": 1} and key in json.dumps(kept) and token not in json.dumps(kept)


def test_a_records_redaction_is_deterministic_and_keeps_json_inside_strings_json() -> None:
    """What `redaction.on_import` and `export --redact` rely on: the same records give
    the same redaction (a re-import compares equal), and a JSON text inside a string
    (a Codex call's arguments) stays JSON."""
    inner = json.dumps({"cmd": ["curl", "-H", f"Authorization: token {PLANTED['github token'][1]}"],
                        "env": PLANTED["aws secret access key"][0]})  # fmt: skip
    records = [{"type": "response_item", "payload": {"type": "function_call", "arguments": inner}},
               {"type": "user", "message": {"content": PLANTED["private key"][0]}}]  # fmt: skip
    once, found = redact_value(records)
    assert redact_value(records)[0] == once and redact_value(once) == (once, {})
    assert set(found) == {"github token", "aws secret access key", "private key"}
    args = json.loads(once[0]["payload"]["arguments"])
    assert "[redacted: github token]" in args["cmd"][2] and "[redacted: aws secret access key]" in args["env"]
    assert PLANTED["private key"][1] not in json.dumps(once)


@pytest.mark.parametrize("pad", ["", "plain words, nothing to see. " * 100])
def test_the_rules_asked_of_a_text_are_those_whose_anchor_it_holds(pad: str) -> None:
    """``applicable``'s quick answer for short text and its search of each anchor for
    long text give what the rules' anchors say, in the rules' order."""

    def named(text: str) -> tuple[Rule, ...]:
        *patterns, lines = RULES
        out = [r for r in patterns if any(a in text for a in r.anchors)]
        return (*out, lines) if any(a in text.lower() for a in lines.anchors) else tuple(out)

    texts = [pad + "no anchor here" + pad]
    texts += [pad + a + pad for r in RULES for a in r.anchors]
    texts += [pad + a.upper() + pad for a in RULES[-1].anchors]  # the line rule ignores case
    texts += [f"{pad}AKIA sk-ant- PASSWORD={pad}", "x" * 3000 + "hooks.slack.com"]
    for text in texts:
        assert applicable(text) == named(text), text.strip()
    assert applicable(texts[0]) == ()
