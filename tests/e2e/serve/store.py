"""A store for `jp serve`'s tests, built by jp itself on the offline model: a
conversation with a compaction and an applied review of three proposals, a fork
of it, and an imported JP folder whose every field is hostile."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.harness import JP, User, ids_in

SCRIPT = "<script>document.title='pwned';window.jpPwned=1</script>"
IMG = '<img src=x onerror="window.jpPwned=2">'
HOSTILE_TITLE = f"title {SCRIPT} & {IMG}"
HOSTILE_ANSWER = (
    f"Answer **bold** {SCRIPT}\n\n{IMG}\n\n"
    "[run me](javascript:window.jpPwned=3) and [a site](https://example.invalid/x)\n\n"
    "![pixel](https://example.invalid/p.png)\n\n"
    '```python\ndef greet(name):\n    return f"<b>{name}</b>"\n```\n'
)
HOSTILE_TOOL = f"tool said {SCRIPT}\n" + "long line of tool output\n" * 200
HOSTILE_LABEL = ("k", f"v{SCRIPT}")
HOSTILE_REQUEST = f"please {IMG} find the needle-in-haystack"
OFFLINE = "--cfg=assistant.model.id=offline/echo"


@dataclass(frozen=True)
class Built:
    user: User
    main: str  # with a compaction and an applied review
    fork: str
    review: str
    hostile: str  # the imported conversation


def _hostile_folder(root: Path) -> Path:
    folder = root / "hostile-jp-folder"
    folder.mkdir(parents=True)
    at = "2026-02-01 10:00:0{}.5".format
    events = [
        {"type": "turn_start", "timestamp": at(1)},
        {"type": "chat_request", "timestamp": at(2), "content": HOSTILE_REQUEST},
        {"type": "chat_response", "timestamp": at(3), "reasoning": f"think {SCRIPT}"},
        {
            "type": "tool_call_request",
            "timestamp": at(4),
            "id": "toolu_1",
            "name": f"fs_{IMG}",
            "arguments": {"path": SCRIPT},
        },
        {
            "type": "tool_call_response",
            "timestamp": at(5),
            "id": "toolu_1",
            "content": HOSTILE_TOOL,
        },
        {"type": "chat_response", "timestamp": at(6), "message": HOSTILE_ANSWER},
    ]
    (folder / "events.json").write_text(json.dumps(events))
    (folder / "metadata.json").write_text(json.dumps({"title": HOSTILE_TITLE}))
    return folder


def build(root: Path) -> Built:
    user = User(root, "serve")
    user.ok("init", str(user.store))
    user.ok(OFFLINE, "q", "--new", "first question about `code`")
    for n in range(2, 7):
        user.ok(OFFLINE, "q", f"question {n}")
    main = user.active()
    user.ok("c", "edit", main, "--title", "Main line", "--pin", "--label", "area=serve")
    user.ok(OFFLINE, "c", "compact", "--turn", "2..3", "--summarize")
    user.ok(OFFLINE, "c", "compact", "--interactive", "--turn", "4..5")
    review = user.active()
    user.ok(OFFLINE, "q", "stop at turn 4")
    user.ok(OFFLINE, "q", "strip reasoning")
    user.ok(OFFLINE, "-y", "c", "compact", "--continue")
    fork = ids_in(user.ok("c", "fork", main))[-1]
    user.ok(OFFLINE, "q", "a question in the fork")
    hostile = user.import_(_hostile_folder(root))
    user.ok("c", "edit", hostile, "--label", "=".join(HOSTILE_LABEL))
    return Built(user, main, fork, review, hostile)


@contextmanager
def serving(user: User, *args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`jp serve` running on a free port: the URL it printed, and the process."""
    proc = subprocess.Popen(
        [str(JP), "serve", "--port", "0", *args],
        env=user.env,
        cwd=user.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://"), (url, proc.stderr.read() if proc.stderr else "")
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)
