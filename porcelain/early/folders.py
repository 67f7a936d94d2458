"""`jp conversation import FOLDER...` of JP folders, run without click.

Loading click and the command line costs more than a small import's own work
(issue 45: twelve commands of 250).  A command line of the command's name and
folders alone (no option, no ``--``, every argument an ASCII path to a folder
that is no session tool's) is run here: the same function the whole command
calls (``porcelain.commands.importjp``), the same application, its operation
closed the same way (``oprecord.finish``) and its failure said the same way
(``render.failures.told``).  Anything else falls through to the whole command.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

COMMANDS = ("conversation", "c", "conversations")


def folders(argv: Sequence[str]) -> tuple[Path, ...] | None:
    """The folders of a command line this module runs; None: not one."""
    if len(argv) < 3 or argv[0] not in COMMANDS or argv[1] != "import":
        return None
    args = argv[2:]
    if any(not a.isascii() or a.startswith("-") for a in args):
        return None  # options, `--`, `-`, or bytes the whole command checks
    paths = tuple(Path(a) for a in args)
    if not all(p.is_dir() for p in paths):
        return None  # the whole command names what is not a folder
    from porcelain.domain.sessionfiles import detect  # lazy: only such a command line

    for path in paths:  # the first path that names a format decides, as the command's
        found = detect(path)
        if found:
            return paths if found == "jp" else None  # sessions: the whole command
    return paths


def answer(argv: Sequence[str]) -> int | None:
    """The exit code of the import, or None: the whole command runs."""
    paths = folders(argv)
    if paths is None:
        return None
    # lazy: what the import needs, never click
    from porcelain.app.oprecord import finish
    from porcelain.commands.context import App, ended
    from porcelain.commands.importjp import import_jp
    from porcelain.render.output import Output

    output = Output()
    late: list[str] = []
    try:
        app = App(output=output, argv=tuple(argv))
        try:
            import_jp(app, paths, activate=False)
        except BaseException:
            kind = sys.exc_info()[0]
            late += finish(app.opened_store(), failed=kind is not None and _failed(kind))
            raise
        late += finish(app.opened_store(), failed=False)
        code = 0
    except (KeyboardInterrupt, BrokenPipeError, Exception) as exc:  # the boundary
        from porcelain.render.failures import told  # lazy: only a failed command

        code = told(output, exc)
    return ended(output, code, late)


def _failed(kind: type[BaseException]) -> bool:
    """As the whole command: an interrupted command says itself what it kept."""
    from porcelain.errors import Interrupted  # lazy: only a failed import asks

    return not issubclass(kind, KeyboardInterrupt | Interrupted)
