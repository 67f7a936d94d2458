"""`jp`'s entry point: the few command lines answered before the command line loads.

Loading click, the commands, the configuration and the store costs more than
some commands' whole work.  Each function here looks at the arguments alone
(nothing imported yet) and, when they are a command it may answer early, hands
them to its own module, which answers with an exit code or returns None: then
the whole command line runs (``porcelain.cli.main``), exactly as if this
module were not there.  An early answer prints what the whole command would.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main() -> None:
    """Run `jp`: an early answer when one applies, else the whole command line."""
    code = session_reimport(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from porcelain.cli import main as whole  # lazy: click and the commands load only here

    whole()


def session_reimport(argv: Sequence[str]) -> int | None:
    """`jp conversation import --from claude-code|codex ...` with no file changed."""
    if "import" not in argv or not any(a == "--from" or a.startswith("--from=") for a in argv):
        return None
    from porcelain.early import reimport  # lazy: only such a command line reads the summary

    return reimport.answer(argv)
