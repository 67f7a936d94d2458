"""Which modules a real `jp` process imports: Python names each one an ``import``
statement loads (``PYTHONPROFILEIMPORTTIME``: one line each on stderr;
``importlib.import_module`` loads are not named, only what they import)."""

from __future__ import annotations

from tests.support.sync_machine import Machine


def imported(machine: Machine, *args: str) -> tuple[str, set[str]]:
    """``jp ARGS``'s output (it must succeed), and every module it imported."""
    machine.env["PYTHONPROFILEIMPORTTIME"] = "1"
    try:
        proc = machine.run(*args)
    finally:
        del machine.env["PYTHONPROFILEIMPORTTIME"]
    assert proc.returncode == 0, proc.stderr
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "porcelain.early" in names, "the probe sees jp's own modules"
    return proc.stdout, names
