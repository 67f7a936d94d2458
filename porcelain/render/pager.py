"""Long output on a terminal goes through a pager, as git's does.

Only when stdout is a terminal, the output is text (not `-F json`), and it
has more lines than the terminal has rows.  The pager is `$JP_PAGER`, else
`$PAGER`, else `less -FRX` (an empty value, or `cat`, means none); it is a
command line split as a shell would and run without one.  What it is given
is the text as the terminal would be given it (control characters already
escaped by ``Output``).  A pager that cannot start is skipped: the text is
printed as it would be without one.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping

from porcelain.render.output import Output

DEFAULT = "less -FRX"


def pager_command(environ: Mapping[str, str]) -> list[str] | None:
    for name in ("JP_PAGER", "PAGER"):
        if name in environ:
            value = environ[name].strip()
            break
    else:
        value = DEFAULT
    try:
        argv = shlex.split(value)
    except ValueError:
        return None
    return argv if argv and argv != ["cat"] else None


def show_lines(
    output: Output, lines: list[str], enabled: bool = True, styled: bool = False
) -> None:
    """``lines`` on stdout, through the pager when they would not fit the screen.

    ``styled`` lines were escaped by their producer and hold jp's own styles
    (rendered Markdown): they are written as they are."""
    write = output.styled_lines if styled else output.lines
    if not enabled or output.json or not output._on_terminal(err=False):
        write(lines)
        return
    rows = shutil.get_terminal_size((80, 24)).lines
    argv = pager_command(os.environ)
    if argv is None or len(lines) < rows:
        write(lines)
        return
    joined = "\n".join(lines) + "\n"
    text = joined if styled else output.shown(joined)
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, text=True)
    except OSError:
        write(lines)
        return
    assert proc.stdin is not None
    try:
        proc.stdin.write(text)
        proc.stdin.close()
    except BrokenPipeError:  # the reader quit early (q in less)
        pass
    proc.wait()
