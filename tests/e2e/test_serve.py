"""`jp serve` over a real socket: the token, the Host check, the headers every
answer carries, read-only, each page and its JSON, and hostile text escaped on
every page (titles, labels, answers, tool output, an imported record)."""

from __future__ import annotations

import http.client
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.e2e.serve.store import HOSTILE_LABEL, HOSTILE_TITLE, IMG, SCRIPT, Built, build, serving

pytestmark = pytest.mark.e2e


class Client:
    """Requests to one server, with the cookie its token URL set."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "", parts.port or 0
        self.root = parts.path.rstrip("/")  # this run's root: every page is under it
        self.token_path = f"/?{parts.query}"
        status, headers, _ = self.get(self.token_path)
        assert status == 303, status
        self.cookie = headers["Set-Cookie"].split(";")[0]

    def get(
        self,
        path: str,
        headers: dict[str, str] | None = None,
        method: str = "GET",
        rooted: bool = True,
    ) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            conn.request(
                method,
                self.root + path if rooted else path,
                headers={"Host": f"127.0.0.1:{self.port}", **(headers or {})},
            )
            reply = conn.getresponse()
            return reply.status, dict(reply.getheaders()), reply.read().decode()
        finally:
            conn.close()

    def page(self, path: str) -> str:
        status, headers, body = self.get(path, {"Cookie": self.cookie})
        assert status == 200, (path, status, body)
        assert "text/html" in headers["Content-Type"]
        return body

    def api(self, path: str) -> Any:
        status, headers, body = self.get("/api" + path, {"Cookie": self.cookie})
        assert status == 200, (path, status, body)
        assert headers["Content-Type"].startswith("application/json")
        return json.loads(body)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("serve"))


@pytest.fixture(scope="module")
def client(built: Built) -> Iterator[Client]:
    with serving(built.user) as (url, _proc):
        yield Client(url)


def test_the_url_is_loopback_with_a_long_random_token(client: Client) -> None:
    assert client.host == "127.0.0.1"
    token = client.token_path.split("token=")[1]
    assert len(token) >= 40
    assert "HttpOnly" in client.get(client.token_path)[1]["Set-Cookie"]
    assert "SameSite=Strict" in client.get(client.token_path)[1]["Set-Cookie"]


@pytest.mark.parametrize("path", ["/", "/api/ls", "/ops", "/static/style.css", "/c/x"])
def test_a_request_without_the_token_is_refused(client: Client, path: str) -> None:
    assert client.get(path)[0] == 403
    assert client.get(path, {"Cookie": f"jp-serve-{client.port}=wrong"})[0] == 403
    assert client.get(path + "?token=wrong")[0] == 403
    # outside this run's root nothing is served, the cookie and the token notwithstanding
    assert client.get(path, {"Cookie": client.cookie}, rooted=False)[0] == 403
    token = client.token_path.split("token=")[1]
    assert client.get(f"{path}?token={token}", rooted=False)[0] == 403


def test_the_cookie_is_this_runs_alone(client: Client) -> None:
    """Named for the port, its Path this run's random root: a browser sends it to no
    other server on 127.0.0.1, and two servers' cookies never share a name."""
    status, headers, _ = client.get(client.token_path)
    cookie = headers["Set-Cookie"]
    assert cookie.startswith(f"jp-serve-{client.port}=")
    assert f"Path={client.root};" in cookie + ";" and len(client.root) > 20
    assert headers["Location"] == client.root + "/"
    page = client.page("/")
    assert f'href="{client.root}/static/style.css"' in page
    assert page.count('="/') == page.count(f'="{client.root}/') > 3  # every link rooted


@pytest.mark.parametrize(
    "host", ["evil.example:{port}", "127.0.0.1:1", "localhost.evil:{port}", ""]
)
def test_a_foreign_host_header_is_refused_even_with_the_token(client: Client, host: str) -> None:
    status, _, body = client.get(
        "/", {"Cookie": client.cookie, "Host": host.format(port=client.port)}
    )
    assert status == 421
    assert "Host" in body


@pytest.mark.parametrize("host", ["localhost:{port}", "[::1]:{port}", "127.0.0.1:{port}"])
def test_loopback_names_are_served(client: Client, host: str) -> None:
    assert (
        client.get("/", {"Cookie": client.cookie, "Host": host.format(port=client.port)})[0] == 200
    )


def test_every_answer_carries_the_security_headers(client: Client) -> None:
    for path in ("/", "/nowhere", "/static/style.css", "/ops", "/api/ls", "/static/live.js"):
        headers = client.get(path, {"Cookie": client.cookie})[1]
        csp = headers["Content-Security-Policy"]
        # jp's own script (from this origin) runs only on the pages that follow the store
        script = "script-src 'self'" if path == "/" else "script-src 'none'"
        assert "default-src 'none'" in csp and script in csp, (path, csp)
        assert "img-src 'self' data:;" in csp and "http" not in csp
        assert "frame-ancestors 'none'" in csp
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "no-referrer"


def test_it_is_read_only(client: Client) -> None:
    for method in ("POST", "PUT", "DELETE"):
        assert client.get("/", {"Cookie": client.cookie}, method=method)[0] == 405


def test_an_unknown_page_or_conversation_is_a_404(client: Client) -> None:
    assert client.get("/c/jp-c00000000000", {"Cookie": client.cookie})[0] == 404
    assert client.get("/c/../../etc/passwd", {"Cookie": client.cookie})[0] == 404
    assert client.get("/api/nothing", {"Cookie": client.cookie})[0] == 404


def test_the_json_has_the_shapes_of_format_json(client: Client, built: Built) -> None:
    user = built.user
    assert client.api("/ls") == user.ls()[::-1]
    printed = user.json("c", "print", built.main)
    assert client.api(f"/c/{built.main}") == printed
    assert client.api(f"/c/{built.main}?compacted=1") == user.json(
        "c", "print", "--compacted", built.main
    )
    assert [o["id"] for o in client.api("/ops")] == [o["id"] for o in user.json("op", "log")]


def test_the_list_filters_and_searches_like_ls_and_grep(client: Client, built: Built) -> None:
    assert [r["id"] for r in client.api("/ls?pinned=1")] == [built.main]
    labelled = [r["id"] for r in built.user.ls("--label", "area=serve")][::-1]
    assert [r["id"] for r in client.api("/ls?label=area%3Dserve")] == labelled
    assert built.main in labelled and built.hostile not in labelled
    found = [r["id"] for r in client.api("/ls?q=needle-in-haystack")]
    assert found == [built.hostile]
    assert client.api("/ls?q=NEEDLE-IN") == []  # grep's smart case: an upper-case letter is exact
    assert {r["id"] for r in client.api("/ls?all=1")} >= {built.review}
    assert len(client.api("/ls?per_page=1&page=2")) == 1


def test_the_tree_review_and_size_pages(client: Client, built: Built) -> None:
    tree = client.api(f"/c/{built.fork}/tree")
    kinds = {n["id"]: n["kind"] for n in tree["nodes"]}
    assert tree["root"] == built.main
    assert kinds[built.fork] == "fork" and kinds[built.review] == "review"
    page = client.page(f"/c/{built.main}/tree")
    assert f'href="{client.root}/c/{built.fork}"' in page and "<svg" in page
    review = client.api(f"/c/{built.main}/review")
    [found] = review["reviews"]
    assert found["id"] == built.review and len(found["proposals"]) == 3
    assert len(found["diffs"]) == 2
    assert {a["operation"] is not None for a in review["applied"]} == {True}
    # the review is finished (applied): its figures are those its proposals were scored
    # with, never scored again against the source the review compacted
    scored = [(p["scored"], p["coverage"]["tokens"]) for p in found["proposals"]]
    assert {how for how, _ in scored} <= {
        "when proposed",
        "against the source when the review began",
    }, scored
    recorded = [
        e["metadata"]["coverage"]["tokens"]
        for e in built.user.events(built.review)
        if e["type"] == "tool_call_response" and "coverage" in (e.get("metadata") or {})
    ]
    assert [t for how, t in scored if how == "when proposed"] == recorded
    assert len({t["before"] for _, t in scored}) == 1, scored  # one source, as it was
    size = client.api(f"/c/{built.main}/size")
    assert size["window"] > 0 and len(size["turns"]) == 7 and size["compactions"]
    assert "<svg" in client.page(f"/c/{built.main}/size")


def test_a_compacted_range_is_one_block_that_unfolds_to_its_turns(
    client: Client, built: Built
) -> None:
    page = client.page(f"/c/{built.main}")
    assert 'class="compaction"' in page and "show the raw turns 2-3" in page
    assert 'id="t-2"' in page  # the raw turn is inside the fold


HOSTILE_PAGES = (
    "/",
    "/?all=1",
    "/?q=needle",
    "/c/{h}",
    "/c/{h}?compacted=1",
    "/c/{h}/tree",
    "/c/{h}/review",
    "/c/{h}/size",
    "/ops",
)


@pytest.mark.parametrize("path", HOSTILE_PAGES)
def test_hostile_text_is_escaped_on_every_page(client: Client, built: Built, path: str) -> None:
    page = client.page(path.format(h=built.hostile))
    own = f'<script src="{client.root}/static/live.js" defer></script>'  # jp's one script, a file
    assert page.count(own) <= 1 and "<script" not in page.replace(own, "").lower()
    assert "<img" not in page.lower()
    assert "javascript:" not in page.lower().replace("javascript:window.jppwned=3", "")
    assert "onerror=" not in page.replace("onerror=&quot;", "")


def test_hostile_fields_show_as_text(client: Client, built: Built) -> None:
    listed = client.page("/")
    assert "title &lt;script&gt;" in listed
    assert "k=v&lt;script&gt;" in listed  # the label
    page = client.page(f"/c/{built.hostile}")
    assert "&lt;script&gt;document.title=" in page  # the answer, the reasoning, the tool output
    assert 'href="javascript:' not in page
    assert 'rel="noopener noreferrer"' in page and 'href="https://example.invalid/x"' in page
    assert "show all" in page  # the long tool output is bounded
    assert 'class="hl"' in page  # the fenced code is highlighted
    assert HOSTILE_TITLE not in page and SCRIPT not in page and IMG not in page
    assert HOSTILE_LABEL[1] not in listed


def test_refs_are_read_again_for_each_request(built: Built, tmp_path: Path) -> None:
    with serving(built.user) as (url, _proc):
        client = Client(url)
        before = client.api("/ls")
        built.user.ok("c", "edit", built.fork, "--title", "Renamed while serving")
        after = {r["id"]: r["title"] for r in client.api("/ls")}
        assert after[built.fork] == "Renamed while serving"
        assert len(before) == len(after)


def test_ctrl_c_stops_it_cleanly(built: Built) -> None:
    with serving(built.user) as (_url, proc):
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        assert proc.stderr is not None
        err = proc.stderr.read()
        assert "Traceback" not in err and "stopped" in err


def test_a_non_loopback_host_needs_yes(built: Built) -> None:
    proc = built.user.fail("serve", "--host", "0.0.0.0", "--port", "0")
    assert "error: refusing to listen on 0.0.0.0" in proc.stderr
    assert "--yes" in proc.stderr


def test_pages_load_while_git_gc_repacks_the_store(built: Built) -> None:
    """A gc that packs and prunes between requests changes nothing a page shows."""
    import subprocess

    with serving(built.user) as (url, _proc):
        client = Client(url)
        before = client.page(f"/c/{built.main}")
        gc = subprocess.Popen(
            ["git", "--git-dir", str(built.user.store), "gc", "--prune=now", "--quiet"],
            env=built.user.env,
        )
        during = [client.api("/ls") for _ in range(3)]
        assert gc.wait(timeout=300) == 0
        assert client.page(f"/c/{built.main}") == before
        assert all(len(rows) == len(during[0]) for rows in during)


def test_a_broken_conversation_fails_its_page_only(tmp_path: Path) -> None:
    """A chain whose tip is not a commit: its page is an error, the others still serve."""
    import subprocess

    from tests.e2e.harness import User

    user = User(tmp_path)
    user.ok("init", str(user.store))
    user.ok("--cfg=assistant.model.id=offline/echo", "q", "--new", "a good one")
    good = user.active()
    blob = subprocess.run(
        ["git", "--git-dir", str(user.store), "hash-object", "-w", "--stdin"],
        input="not a commit",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    bad = good[:-1] + ("1" if good[-1] != "1" else "2")
    (user.store / "refs" / "conversations").mkdir(parents=True, exist_ok=True)
    (user.store / "refs" / "conversations" / bad).write_text(blob + "\n")
    with serving(user) as (url, proc):
        client = Client(url)
        status, _, body = client.get(f"/c/{bad}", {"Cookie": client.cookie})
        assert status in (404, 500) and "Traceback" not in body
        assert good in client.page("/")
        assert client.api(f"/c/{good}")["id"] == good
        assert proc.poll() is None
