"""Commands answered before click, the configuration and the store load.

Each module here looks at the command line and the files it names, and either
answers the command whole (same output, same exit code, same state as the
command itself) or returns None on any doubt: then the command runs as usual.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence


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
    from porcelain.cli import main as run  # lazy: the commands not answered here

    run(tried=True)


def answer(argv: Sequence[str], environ: Mapping[str, str]) -> int | None:
    """The exit code of a command answered here, or None: run it as usual."""
    try:
        if "pull" in argv:
            from porcelain.early import pull  # lazy: only a pull reads its files

            return pull.answer(argv, environ)
    except Exception:  # noqa: BLE001 - any surprise: the command itself runs and says it
        return None
    return None
