"""A command's result in the format asked for: ``Output.emit`` and its kin decide
text or JSON, so a command hands over both forms and never asks which."""

from __future__ import annotations

import io
import json

from porcelain.render.output import Output


def _outputs(fmt: str) -> tuple[Output, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Output(fmt, out, err), out, err


def test_emit_writes_the_value_as_json_or_the_text() -> None:
    for text, shown in (("one", "one\n"), (["a", "b"], "a\nb\n"), (None, ""), ([], "")):
        output, out, _ = _outputs("text")
        output.emit({"id": 1}, text)
        assert out.getvalue() == shown
        output, out, _ = _outputs("json")
        output.emit({"id": 1}, text)
        assert json.loads(out.getvalue()) == {"id": 1}


def test_a_text_function_runs_only_for_text() -> None:
    calls: list[str] = []
    output, out, _ = _outputs("json")
    output.emit([1], lambda: calls.append("ran"))
    assert calls == [] and json.loads(out.getvalue()) == [1]
    output, out, _ = _outputs("text")
    output.emit([1], lambda: output.line("by hand"))
    assert out.getvalue() == "by hand\n"


def test_text_parts_are_left_out_of_json() -> None:
    output, out, _ = _outputs("json")
    output.text("Conversation x archived.")
    output.emit({"archived": ["x"]})
    assert json.loads(out.getvalue()) == {"archived": ["x"]}
    output, out, _ = _outputs("text")
    output.text("Conversation x archived.")
    output.emit({"archived": ["x"]})
    assert out.getvalue() == "Conversation x archived.\n"


def test_say_is_the_result_in_text_and_a_note_beside_json() -> None:
    output, out, err = _outputs("json")
    output.say("Withdraw 2 compactions")
    assert out.getvalue() == "" and err.getvalue() == "Withdraw 2 compactions\n"
    output, out, err = _outputs("text")
    output.say("Withdraw 2 compactions")
    assert out.getvalue() == "Withdraw 2 compactions\n" and err.getvalue() == ""


def test_emit_json_says_whether_it_wrote_the_result() -> None:
    output, out, _ = _outputs("json")
    assert output.emit_json({"a": 1}) is True and json.loads(out.getvalue()) == {"a": 1}
    output, out, _ = _outputs("text")
    assert output.emit_json({"a": 1}) is False and out.getvalue() == ""
