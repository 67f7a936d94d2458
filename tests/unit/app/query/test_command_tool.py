"""A command tool's output: decoded with replacement, read bounded, and the
command's whole process group bounded by its timeout."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from porcelain.app.query.command_run import decoded
from porcelain.app.query.registry import ToolCall
from porcelain.app.query.tools import kept_bytes, run_command

CALL = ToolCall("toolu_1", "t", {"q": "x"})


def run(code: str, cap: int | None = None, timeout: float = 60) -> tuple[str, bool]:
    table = {"command": [sys.executable, "-c", code], "timeout": timeout}
    outcome = run_command("t", table, CALL, environ={"PATH": "/usr/bin:/bin"}, cap=cap)
    return outcome.content, outcome.is_error


def test_latin1_and_binary_output_are_a_result_not_a_crash() -> None:
    text, error = run("import sys; sys.stdout.buffer.write('Jos\\xe9 Mu\\xf1oz\\n'.encode('latin-1'))")
    assert not error
    assert text.startswith("Jos\ufffd Mu\ufffdoz\n")
    assert "[jp: the output is not UTF-8 text: 2 byte(s) shown as U+FFFD]" in text
    binary, error = run("import sys; sys.stdout.buffer.write(bytes(range(256)))")
    assert not error and "not UTF-8" in binary and "\x00" in binary


def test_utf8_output_is_kept_exactly() -> None:
    text, error = run("print('caf\\u00e9 \\u2603')")
    assert (text, error) == ("caf\u00e9 \u2603\n", False)


def test_a_failing_command_with_latin1_errors_is_an_error_result() -> None:
    text, error = run(
        "import sys; sys.stderr.buffer.write(b'bad \\xff'); sys.exit(3)"
    )
    assert error and text.startswith("tool t exited 3: bad \ufffd") and "not UTF-8" in text


def test_output_past_the_cap_is_read_on_but_not_kept() -> None:
    text, error = run("import sys; sys.stdout.write('y' * 5_000_000)", cap=1000)
    assert not error
    assert text.split("\n")[0] == "y" * kept_bytes(1000) == "y" * 500
    assert "[jp: the output was 5000000 bytes; only the first 500 were kept]" in text


def test_a_cut_inside_a_character_drops_the_half() -> None:
    assert decoded("ab\u00e9".encode()[:-1], cut=True) == ("ab", 0)
    assert decoded(b"ab\xc3", cut=False) == ("ab\ufffd", 1)


def test_a_child_left_holding_the_output_does_not_keep_the_turn_waiting(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    code = (
        "import subprocess, sys; "
        f"p = subprocess.Popen(['sleep', '300']); open({str(marker)!r}, 'w').write(str(p.pid)); "
        "print('done')"
    )
    text, error = run(code, timeout=120)  # the child would hold stdout for 300 s
    assert (text, error) == ("done\n", False)
    pid = int(marker.read_text())
    deadline = time.monotonic() + 60  # SIGKILL is sent; its delivery is the kernel's
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(pid), "the child was killed with its group"


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_the_timeout_ends_the_whole_group() -> None:
    code = "import subprocess; subprocess.run(['sleep', '300'])"
    text, error = run(code, timeout=1)
    assert error and text == "tool t: timed out after 1 s"


def test_a_command_that_never_reads_its_stdin_still_runs() -> None:
    table = {"command": [sys.executable, "-c", "print('ok')"]}
    big = ToolCall("toolu_2", "t", {"blob": "z" * 1_000_000})
    outcome = run_command("t", table, big, environ={"PATH": "/usr/bin:/bin"})
    assert (outcome.content, outcome.is_error) == ("ok\n", False)
