"""`jp serve` masks secrets on every page and JSON answer that shows stored text
(docs/security.md, section 7): the list and its search, the tree, the reviews,
the size chart, the operation log, usage, and what a followed page receives;
``?secrets=1`` shows them to a request from this machine only."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from tests.e2e.harness import User
from tests.e2e.serve.store import serving
from tests.e2e.test_serve import Client
from tests.support import secretcorpus as corpus
from tests.support.secretcorpus import PLANTED

pytestmark = pytest.mark.e2e

OFFLINE = "--cfg=assistant.model.id=offline/echo"
TITLE = PLANTED["github token"][1]
LABEL = PLANTED["stripe key"][1]
GUIDANCE = PLANTED["slack token"][1]
RESULT = PLANTED["aws secret access key"][1]
VALUES = (TITLE, LABEL, GUIDANCE, RESULT, PLANTED["private key"][1])


def _leaks(text: str) -> list[str]:
    return [v for v in VALUES if v in text or v.replace("/", "\\/") in text]


@pytest.fixture
def planted(user: User, tmp_path: Path) -> str:
    """A conversation with a secret in its tool result, its title, a label, the
    guidance of a compaction (so in the operation log), and a fork of it."""
    cid = user.import_(Path(str(corpus.leaky_jp(tmp_path / "17800000940-leaky"))))
    user.ok("c", "edit", cid, "--title", f"deploy {TITLE}", "--label", f"key={LABEL}")
    user.ok("c", "use", cid)
    user.ok(OFFLINE, "c", "compact", "--turn", "1", f"--summarize=keep {GUIDANCE}")
    user.ok("c", "fork", cid)
    user.import_(Path(str(corpus.leaky_jp(tmp_path / "17800000941-key", "private key"))))
    return cid


def test_every_page_and_answer_masks_what_the_scanner_finds(user: User, planted: str) -> None:
    cid = planted
    pages = ["/", f"/?q={TITLE[:12]}", f"/?title={TITLE[:8]}", "/?all=1", f"/c/{cid}",
             f"/c/{cid}/tree", f"/c/{cid}/review", f"/c/{cid}/size", "/ops", "/usage"]  # fmt: skip
    answers = ["/ls", f"/c/{cid}", f"/c/{cid}/tree", f"/c/{cid}/review", f"/c/{cid}/size", "/ops", "/usage"]
    with serving(user) as (url, _proc):
        client = Client(url)
        for path in pages:
            assert _leaks(client.page(path)) == [], path
        for path in answers:
            assert _leaks(json.dumps(client.api(path), ensure_ascii=False)) == [], path
        for path in (f"/live/c/{cid}?tip=0&c=1", "/live/ls?state=0"):
            status, _headers, body = client.get(path, {"Cookie": client.cookie})
            assert status == 200 and "[redacted: " in body and _leaks(body) == [], path
        tree = client.page(f"/c/{cid}/tree")
        assert "[redacted: github token]" in tree and "secret(s) found (this machine only)" in tree
        assert "[redacted: slack token]" in client.page(f"/c/{cid}/review")
        assert "[redacted: github token]" in client.page("/ops")
        # a search for a secret's own text finds nothing: no page is an oracle for it
        assert "No conversations match." in client.page(f"/?q={quote(RESULT[:16])}")
        assert f"r-{cid}" in client.page(f"/?q={quote(RESULT[:16])}&secrets=1")
        # a line inside a private key block: the block is found in its whole event
        key_line = corpus.PRIVATE_KEY.splitlines()[2]
        assert "No conversations match." in client.page(f"/?q={quote(key_line[:24])}")
        assert key_line[:24] in client.page(f"/?q={quote(key_line[:24])}&secrets=1")
        # from loopback the toggle shows them, page by page
        assert TITLE in client.page(f"/c/{cid}/tree?secrets=1")
        assert LABEL in json.dumps(client.api("/ls?secrets=1"))
        assert GUIDANCE in client.page(f"/c/{cid}/review?secrets=1")
        assert TITLE in client.page("/ops?secrets=1")
        status, _headers, body = client.get(f"/live/c/{cid}?tip=0&c=1&secrets=1", {"Cookie": client.cookie})
        assert RESULT in body


def test_the_toggle_is_dropped_for_a_request_from_another_machine(user: User, planted: str) -> None:
    """A server on every address: a request from the machine's own non-loopback
    address gets the pages masked, ``?secrets=1`` or not."""
    import subprocess

    listed = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    own = next((a for a in listed if "." in a and not a.startswith("127.")), None)
    if own is None:
        pytest.skip("this machine has no address other than loopback")
    with serving(user, "--host", "0.0.0.0", "--yes") as (url, _proc):
        parts = urlsplit(url)
        client = Client(parts._replace(netloc=f"{own}:{parts.port}").geturl())
        for path in (f"/c/{planted}/tree?secrets=1", "/ops?secrets=1", f"/c/{planted}?secrets=1"):
            status, _headers, body = client.get(path, {"Cookie": client.cookie, "Host": f"{own}:{client.port}"})
            assert status == 200 and _leaks(body) == [], path
