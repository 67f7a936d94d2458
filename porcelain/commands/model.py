"""`jp model`: the warm model process (docs/models.md)."""

from __future__ import annotations

import os
import signal
from typing import Any

import click

from porcelain import clock
from porcelain.commands.context import App
from porcelain.domain.defaults import default_model


@click.group()
def model() -> None:
    """The models jp can call (`jp model ls`) and the warm model process.

    `jp model ls` lists providers, aliases and model ids, with the key each
    needs and whether it is set.  The first `jp q` that calls a provider starts it; later queries hand it
    their request over an owner-only socket, so the SDK is imported once per
    session.  It stops by itself after `assistant.warm.idle_minutes` (15)
    without a request.  Turn it off with `assistant.warm.enable = false`, or
    JP_WARM=0 in the environment.
    """


@model.command("ls")
@click.pass_obj
def ls(app: App) -> None:
    """List providers (built in and configured), aliases and known model ids, with
    each model's context window and the key it needs (set or not; never its value)."""
    # lazy: the model list loads only for `jp model ls`
    from porcelain.app.modellist import model_list
    from porcelain.render.modelview import model_lines

    config = app.config()
    default = config.model_id() or default_model(app.has_api_key())
    listing = model_list(config, app.environ, default)
    if app.output.emit_json(listing.to_json()):
        return
    app.output.lines(model_lines(listing))


@model.command()
@click.pass_obj
def status(app: App) -> None:
    """List the running warm model processes."""
    # lazy: the warm client loads only for `jp model` subcommands
    from porcelain.models.warm_client import ask, servers

    found: list[dict[str, Any]] = []
    for path in servers(app.environ):
        answer = ask(path, "ping")
        if answer is not None and answer.get("t") in ("pong", "silent"):
            row = {k: v for k, v in answer.items() if k != "t"}
            found.append({"socket": str(path), "answering": answer["t"] == "pong", **row})
    if app.output.emit_json(found):
        return
    if not found:
        app.output.line("No warm model process is running.")
        return
    now = clock.current().time()
    for row in found:
        if not row["answering"]:
            app.output.line(
                f"pid {row.get('pid') or '?'}: not answering (stopped or frozen); "
                "`jp q` runs its calls in process meanwhile; `jp model stop` ends it"
            )
            app.output.line(f"  socket {row['socket']}")
            continue
        minutes = (now - float(row.get("started") or now)) / 60
        sdks = ", ".join(row.get("sdks") or []) or "none yet"
        app.output.line(
            f"pid {row.get('pid')}: up {minutes:.0f} min, {row.get('served', 0)} calls, "
            f"idle {float(row.get('idle_seconds') or 0):.0f} s of "
            f"{float(row.get('idle_limit') or 0):.0f} s, SDKs: {sdks}"
        )
        app.output.line(f"  socket {row['socket']}")


@model.command()
@click.pass_obj
def stop(app: App) -> None:
    """Stop every warm model process of this user (the next `jp q` starts one again)."""
    # lazy: the warm client loads only for `jp model` subcommands
    from porcelain.models.warm_client import ask, servers

    stopped = []
    for path in servers(app.environ):
        answer = ask(path, "stop")
        if answer is not None and answer.get("t") == "stopping":
            stopped.append(int(answer.get("pid") or 0))
        elif answer is not None and answer.get("t") == "silent" and _end(answer.get("pid")):
            stopped.append(int(answer["pid"]))  # the peer's uid is ours (SO_PEERCRED)
    if app.output.emit_json({"stopped": stopped}):
        return
    if not stopped:
        app.output.line("No warm model process was running.")
        return
    noun = "process" if len(stopped) == 1 else "processes"
    pids = ", ".join(str(p) for p in stopped)
    app.output.line(f"Stopped {len(stopped)} warm model {noun} (pid {pids}).")


def _end(pid: Any) -> bool:
    """End a warm process that does not answer: SIGTERM, then SIGCONT so a stopped
    one wakes up to take it."""
    if not isinstance(pid, int) or pid <= 1:
        return False
    try:
        os.kill(pid, signal.SIGTERM)
        os.kill(pid, signal.SIGCONT)
    except OSError:
        return False
    return True
