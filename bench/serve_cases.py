"""`jp serve` (design section 8): a page of a long conversation against `jp
conversation print` of it, and a page of the list of many conversations against
`jp conversation ls -F json`, each a whole request against a whole process.

The server runs as `jp serve` itself; each request opens the store, reads the
refs and renders (as every page does), timed from the request to the last byte.
"""

from __future__ import annotations

import http.client
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

from bench import build
from bench.common import (
    Profile,
    Results,
    Row,
    clean_env,
    interleaved,
    jp_command,
    run_process,
    verdict,
)

WITHIN = 2.0  # the page may take up to twice the command's whole process


def _get(host: str, port: int, path: str, cookie: str) -> float:
    start = time.perf_counter()
    conn = http.client.HTTPConnection(host, port, timeout=600)
    conn.request("GET", path, headers={"Host": f"{host}:{port}", "Cookie": cookie})
    reply = conn.getresponse()
    reply.read()
    conn.close()
    if reply.status != 200:
        raise RuntimeError(f"GET {path}: {reply.status}")
    return time.perf_counter() - start


def serve_section(root: Path, profile: Profile, results: Results) -> None:
    count, size = profile.conversations, profile.load_size
    results.log(f"  building {count:,} conversations and one of {size:,} events")
    store = build.new_store(root / "serve.git")
    build.many_conversations(store, count, results.log)
    big = build.cid_for(count + 1)
    build.conversation(store, big, size, seed=11)
    home = root / "home-serve"
    home.mkdir()
    env = clean_env(home, store.path)
    jp = jp_command()
    server = subprocess.Popen(
        [*jp, "serve", "--port", "0"],
        env=env,
        cwd=home,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = urlsplit(server.stdout.readline().strip())
        host, port = url.hostname or "127.0.0.1", url.port or 0
        conn = http.client.HTTPConnection(host, port, timeout=600)
        conn.request("GET", f"/?{url.query}", headers={"Host": f"{host}:{port}"})
        cookie = (conn.getresponse().getheader("Set-Cookie") or "").split(";")[0]
        conn.close()
        medians = interleaved(
            {
                "page": lambda: _get(host, port, f"/c/{big}", cookie),
                "print": lambda: run_process([*jp, "conversation", "print", big], env, home),
                "list": lambda: _get(host, port, "/", cookie),
                "ls": lambda: run_process([*jp, "-F", "json", "conversation", "ls"], env, home),
            },
            profile.few(profile.runs),
        )
    finally:
        server.terminate()
        server.wait(timeout=60)
    for what, base, name, floor in (
        (
            "page",
            "print",
            f"serve: a page of a {size:,}-event conversation",
            "jp conversation print of it",
        ),
        (
            "list",
            "ls",
            f"serve: the list of {count:,} conversations (a page)",
            "jp conversation ls -F json",
        ),
    ):
        ratio = medians[what] / medians[base] if medians[base] else 0.0
        results.add(
            Row(
                name,
                medians[what],
                floor,
                medians[base],
                f"< {WITHIN:.0f}x",
                verdict(ratio < WITHIN),
            )
        )
