"""`jp`'s entry point: the few command lines answered before the command line loads.

Loading click, the commands, the configuration and the store costs more than
some commands' whole work.  Each function here looks at the arguments alone
(nothing imported yet) and, when they are a command it may answer early, hands
them to its own module, which answers with an exit code or returns None on any
doubt: then the whole command line runs (``porcelain.cli.main``), exactly as if
this module were not there.  An early answer prints what the whole command
would, with the same exit code and the same state.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

# the testing hooks (porcelain/clock.py, porcelain/app/faults.py): only the whole
# command line honours them, so a run with one set is never answered early
HOOKS = ("JP_FAULT", "JP_TEST_CLOCK", "JP_TEST_SEED")


def main() -> None:
    """The `jp` entry point: a command answered here exits before click loads;
    any other runs as ``porcelain.cli.main``."""
    try:
        code = answer(sys.argv[1:], os.environ)
    except KeyboardInterrupt:  # as porcelain.cli.main says it: nothing was half written
        sys.stderr.write("\ninterrupted: what was already written is kept\n")
        sys.exit(130)
    if code is not None:
        sys.exit(code)
    from porcelain.cli import main as run  # lazy: click and the commands load only here

    run()


def answer(argv: Sequence[str], environ: Mapping[str, str]) -> int | None:
    """The exit code of a command answered here, or None: run it as usual."""
    if any(environ.get(name) for name in HOOKS):
        return None
    code = session_reimport(argv, environ)
    if code is None:
        code = noop_pull(argv, environ)
    if code is None and "import" in argv:
        from porcelain.early import folders  # lazy: only an import's command line

        code = folders.answer(argv)
    return code


def session_reimport(argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> int | None:
    """`jp conversation import --from claude-code|codex ...` with no file changed."""
    if "import" not in argv or not any(a == "--from" or a.startswith("--from=") for a in argv):
        return None
    from porcelain.early import reimport  # lazy: only such a command line reads the summary

    return reimport.answer(argv, environ)


def noop_pull(argv: Sequence[str], environ: Mapping[str, str]) -> int | None:
    """`jp pull` from a path remote whose journal has not moved."""
    if "pull" not in argv:
        return None
    try:
        from porcelain.early import pull  # lazy: only a pull reads its files

        return pull.answer(argv, environ)
    except Exception:  # noqa: BLE001 - any surprise: the command itself runs and says it
        return None
