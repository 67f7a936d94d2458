"""The spinner: only where stdout and stderr are a terminal with colours, erased
before anything else is written (whichever ``Output`` writes it), and a tool's
name in its label escaped."""

from __future__ import annotations

import io

import pytest

from porcelain.render.output import Output
from porcelain.render.turnview import RECEIVING, TerminalView


class Screen(io.StringIO):
    def __init__(self, tty: bool = True) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.fixture(autouse=True)
def colours(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("NO_COLOR", raising=False)


def drawn(err: Screen, label: str) -> None:
    """Wait (no time limit of our own: pytest's) until the spinner has drawn once."""
    while label not in err.getvalue():
        pass


def test_an_error_from_another_output_erases_the_spinner_first() -> None:
    out, err = Screen(), Screen()
    Output(out=out, err=err).start_spinner("waiting for the model")
    drawn(err, "waiting for the model")
    Output(out=out, err=err).error("boom", "try again")
    shown = err.getvalue()
    before, after = shown.rsplit("error: boom", 1)
    assert before.endswith("\r" + " " * len("| waiting for the model") + "\r")
    assert after == "\ntry again\n", "no frame is drawn after the error"


def test_a_question_stops_the_spinner() -> None:
    out, err = Screen(), Screen()
    output = Output(out=out, err=err)
    output.start_spinner("running deploy")
    drawn(err, "running deploy")
    assert output.confirm("Run tool deploy?", stdin=io.StringIO("y\n")) is True
    assert err.getvalue().rsplit("\r", 1)[1] == "Run tool deploy? [y/N] \n"


@pytest.mark.parametrize(
    "out, err, env",
    [
        (Screen(tty=False), Screen(), {}),  # stdout piped
        (Screen(), Screen(tty=False), {}),  # stderr redirected
        (Screen(), Screen(), {"NO_COLOR": "1"}),
        (Screen(), Screen(), {"TERM": "dumb"}),
    ],
)
def test_no_spinner_off_a_colour_terminal(
    out: Screen, err: Screen, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    output = Output(out=out, err=err)
    assert not output.animates()
    spinner = output.start_spinner("waiting for the model")
    spinner.stop()
    assert err.getvalue() == ""


def test_a_tool_name_in_the_label_is_escaped() -> None:
    out, err = Screen(), Screen()
    view = TerminalView(Output(out=out, err=err), markdown=True)
    view.tool_call({"name": "x\x1b]0;T\x07\ny", "arguments": {}})
    assert view.spinner is not None
    assert view.spinner.label == "running x\\x1b]0;T\\x07\\ny"
    view.tool_result("x", "done", False)
    assert view.spinner is None


def test_text_that_cannot_be_shown_yet_keeps_a_spinner_up() -> None:
    out, err = Screen(), Screen()
    view = TerminalView(Output(out=out, err=err), markdown=True)
    view.waiting()
    assert view.spinner is not None and view.spinner.label == "waiting for the model"
    view("text", "A paragraph still ")
    assert view.spinner is not None and view.spinner.label == RECEIVING
    assert out.getvalue() == ""
    view("text", "arriving.\n\n")
    assert view.spinner is None and "A paragraph still arriving." in out.getvalue()
    view.finish()
