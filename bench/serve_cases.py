"""`jp serve` (design section 8): a page of a long conversation against `jp
conversation print` of it, and a page of the list of many conversations against
`jp conversation ls -F json`, each a whole request against a whole process; and
what a followed page costs while nothing changes (its check of `/live/...`,
answered 204 after a refs check) against the page itself.

The server runs as `jp serve` itself; each request opens the store, reads the
refs and renders (as every page does), timed from the request to the last byte.
"""

from __future__ import annotations

import html
import http.client
import re
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
IDLE = 0.2  # a followed page's check while nothing moved: a small part of the page


def _get(host: str, port: int, path: str, cookie: str) -> float:
    start = time.perf_counter()
    conn = http.client.HTTPConnection(host, port, timeout=600)
    conn.request("GET", path, headers={"Host": f"{host}:{port}", "Cookie": cookie})
    reply = conn.getresponse()
    reply.read()
    conn.close()
    if reply.status not in (200, 204):
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
        site = url.path.rstrip("/")  # the run's root: every page is under it
        conn = http.client.HTTPConnection(host, port, timeout=600)
        conn.request("GET", f"{site}/?{url.query}", headers={"Host": f"{host}:{port}"})
        cookie = (conn.getresponse().getheader("Set-Cookie") or "").split(";")[0]
        conn.close()
        live = _follow(host, port, f"{site}/c/{big}", cookie)
        medians = interleaved(
            {
                "page": lambda: _get(host, port, f"{site}/c/{big}", cookie),
                "idle": lambda: _get(host, port, live, cookie),
                "print": lambda: run_process([*jp, "conversation", "print", big], env, home),
                "list": lambda: _get(host, port, f"{site}/", cookie),
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
    # a followed page while nothing changes: one refs check, no event read
    ratio = medians["idle"] / medians["page"] if medians["page"] else 0.0
    results.add(
        Row(
            f"serve: an idle check of a followed {size:,}-event page (204)",
            medians["idle"],
            "the page itself",
            medians["page"],
            f"< {IDLE:.1f}x",
            verdict(ratio < IDLE),
        )
    )


def _follow(host: str, port: int, path: str, cookie: str) -> str:
    """The ``/live/...`` link a followed page asks while it is open."""
    conn = http.client.HTTPConnection(host, port, timeout=600)
    conn.request("GET", path, headers={"Host": f"{host}:{port}", "Cookie": cookie})
    body = conn.getresponse().read().decode()
    conn.close()
    found = re.search(r'data-live="([^"]+)"', body)
    if found is None:
        raise RuntimeError(f"GET {path}: no data-live link")
    return html.unescape(found.group(1))
