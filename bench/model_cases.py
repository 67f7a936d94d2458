"""`jp q` until its request leaves the machine, with and without the warm model
process, against the bare SDK's import; and the request building of the two
providers on the same conversation.

The provider is the loopback fake of the Messages API (tests/support): it notes
the moment each request arrives, so a sample is the time from starting `jp q`
to the request reaching the fake, the model's answer left out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import build
from bench.common import Profile, Results, Row, clean_env, interleaved, jp_command, verdict
from bench.synth import Writer

OWN_LIMIT = 0.15
# the floor of a cold query: the SDK imported, its client built, one request sent
# (the fake's URL and key come from the environment, as for jp)
SDK = (
    "import anthropic; anthropic.Anthropic(max_retries=0).messages.create("
    "model='claude-bench', max_tokens=16, messages=[{'role': 'user', 'content': 'bench'}])"
)


def query_section(root: Path, profile: Profile, results: Results) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.support.fake_messages import FakeMessages

    home = root / "home-model"
    (home / "config" / "jp").mkdir(parents=True)
    (home / "config" / "jp" / "config.toml").write_text(
        '[assistant.model]\nid = "anthropic/claude-bench"\n'
    )
    store = build.new_store(root / "model.git")
    cid = build.cid_for(7)
    build.conversation(store, cid, 1 + 8 * 4, seed=7)
    store.refs.set_active(cid)
    runtime = Path(tempfile.mkdtemp(prefix="jpb-", dir="/tmp"))
    arrivals: list[float] = []

    def arrived(body: dict[str, Any]) -> bool:
        arrivals.append(time.perf_counter())
        return True

    with FakeMessages() as fake:
        env = {**clean_env(home, store.path), **fake.env(), "XDG_RUNTIME_DIR": str(runtime)}
        fake.reply_text("ok", when=arrived, times=None)

        def query(warm: str) -> Callable[[], float]:
            def run() -> float:
                arrivals.clear()
                start = time.perf_counter()
                subprocess.run(
                    [*jp_command(), "q", "bench"],
                    env={**env, "JP_WARM": warm},
                    cwd=home,
                    capture_output=True,
                    check=True,
                )
                return arrivals[0] - start

            return run

        def sdk() -> float:
            arrivals.clear()
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", SDK], env=env, check=True, capture_output=True)
            return arrivals[0] - start

        def python() -> float:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
            return time.perf_counter() - start

        variants = {"cold": query("0"), "warm": query("1"), "sdk": sdk, "python": python}
        try:
            query("1")()  # the first warm query starts the process
            medians = interleaved(variants, profile.few(3 * profile.runs))
        finally:
            subprocess.run([*jp_command(), "model", "stop"], env=env, capture_output=True)
            shutil.rmtree(runtime, ignore_errors=True)
    _query_rows(medians, results)


def _query_rows(medians: Any, results: Results) -> None:
    sdk_cost = medians["sdk"] - medians["python"]  # import, client, request: beyond python's start
    for name in ("warm", "cold"):
        own = medians[name] - (sdk_cost if name == "cold" else 0.0)
        note = f"jp's own: {own * 1000:.0f} ms" + (
            " (less the SDK's import, client and request)" if name == "cold" else " (no SDK import)"
        )
        results.add(
            Row(
                f"model: jp q to the request leaving, {name}",
                medians[name],
                "python: import anthropic, client, request",
                medians["sdk"],
                f"jp's own < {OWN_LIMIT * 1000:.0f} ms" if name == "warm" else "SDK paid per query",
                verdict(own < OWN_LIMIT) if name == "warm" else "",
                note=note,
                cpu=medians.cpu[name],
                base_cpu=medians.cpu["sdk"],
            )
        )


def building_section(profile: Profile, results: Results) -> None:
    """The openai provider's request building against the anthropic one."""
    from porcelain.domain.view import model_events
    from porcelain.models import ModelRequest, ToolSpec, anthropic_model, openai_model

    size = max(profile.sizes[:3])
    events = list(Writer(11).events("jp-c1", size))
    tools = [ToolSpec("fs_read_file", "Read", {"type": "object", "properties": {}})]
    request = ModelRequest("x/model", "be brief", model_events(events), tools)

    def timed(fn: Callable[[ModelRequest], Any]) -> Callable[[], float]:
        def run() -> float:
            start = time.perf_counter()
            fn(request)
            return time.perf_counter() - start

        return run

    medians = interleaved(
        {
            "openai": timed(openai_model.build_params),
            "anthropic": timed(anthropic_model.build_params),
        },
        profile.rounds,
    )
    results.add(
        Row(
            f"model: build the request, {size:,} events (openai)",
            medians["openai"],
            "the anthropic request",
            medians["anthropic"],
            "same order as anthropic",
            verdict(medians["openai"] < 2 * medians["anthropic"]),
        )
    )


def model_section(root: Path, profile: Profile, results: Results) -> None:
    building_section(profile, results)
    if os.name == "posix":
        query_section(root, profile, results)
