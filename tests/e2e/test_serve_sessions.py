"""`jp serve` round 2 over a real socket: an imported Claude Code session (tool calls
in one line with their results under them, images checked by their bytes, its
summary as its title, its subagent with its type), a conversation compacted twice
(the summary in force, the earlier one listed as superseded), the project filter,
and hostile text in tool inputs, image data and project names kept inert."""

from __future__ import annotations

import html
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import User
from tests.e2e.serve.sessions import AGENT, PROJECT, SCRIPT, SUMMARY, build_sessions
from tests.e2e.serve.store import serving
from tests.e2e.test_serve import Client

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[User, dict[str, str]]:
    root = tmp_path_factory.mktemp("sessions")
    user = User(root, "serve")
    user.ok("init", str(user.store))
    return user, build_sessions(user, root)


@pytest.fixture(scope="module")
def client(store: tuple[User, dict[str, str]]) -> Iterator[Client]:
    with serving(store[0]) as (url, _proc):
        yield Client(url)


def inert(page: str) -> None:
    assert "<script>document.title" not in page and "onload=" not in page.replace(
        "onload=x&gt;", ""
    )
    assert "&lt;script&gt;document.title" in page or SCRIPT not in page


def test_the_session_reads_by_turn_with_each_call_and_its_result(
    client: Client, store: tuple[User, dict[str, str]]
) -> None:
    ids = store[1]
    page = client.page(f"/c/{ids['session']}")
    inert(page)
    assert f"<title>{SUMMARY} · jp</title>" in page  # Claude Code's own summary names it
    lines = re.findall(
        r'<span class="tool-name">([^<]*)</span><code class="tool-line">([^<]*)</code>', page
    )
    assert lines == [
        (
            "Bash",
            "curl -s localhost:8000/checkout &lt;script&gt;document.title=&#x27;pwned&#x27;;window.jpPwned=1&lt;/script&gt;",
        ),
        ("Read", "/home/dev/shop/shot.png"),
        (
            "mcp__github__search_issues",
            "{&quot;query&quot;: &quot;checkout blank&quot;, &quot;repo&quot;: &quot;dev/shop&quot;}",
        ),
        ("Task", "Explore · find the template"),
    ]
    assert page.count('class="tool-output"') == 4  # each result folded under its call
    assert "show all (" in page  # the long curl output is cut
    assert '<details class="reasoning"><summary>thinking</summary>' in page
    # two real images (the prompt's, the screenshot) drawn with their sizes; the fake refused
    assert page.count('<img src="data:image/png;base64,') == 2
    assert "image/png, 6×4" in page and "image/png, 40×24" in page
    assert "said to be image/png are not an image" in page


def test_names_are_whole_ids_titles_by_one_rule_and_subagents_typed(
    client: Client, store: tuple[User, dict[str, str]]
) -> None:
    user, ids = store
    listed = client.page("/?all=1")
    for cid in ids.values():
        assert f">{cid[:4]}" in listed and cid in listed  # the whole id, its unique prefix bold
    assert f"subagent (Explore) of {ids['session']}" in listed
    assert SUMMARY in listed and "turn 1 of the compacted one" in listed  # never "(untitled)"
    shown = user.ok("c", "show", ids["session"])
    assert f"Title:        {SUMMARY}" in shown
    ls = user.ok("c", "ls")
    assert SUMMARY in ls and "turn 1 of the compacted one" in ls
    tree = client.api(f"/c/{ids['agent']}/tree")
    kinds = {n["id"]: n["label"] for n in tree["nodes"]}
    assert kinds[ids["agent"]] == "subagent (Explore)"
    assert client.api("/ls?all=1&imported=claude-code")[0]["imported_from"]["agent"] in (
        AGENT,
        None,
    )


def test_a_conversation_compacted_twice_shows_the_summary_in_force(
    client: Client, store: tuple[User, dict[str, str]]
) -> None:
    page = client.page(f"/c/{store[1]['twice']}")
    blocks = re.findall(r'<section class="compaction" id="k-\d+"><h2>([^<]*)</h2>', page)
    assert blocks == ["turns 2-10, compacted"]  # not the earlier 2-8 with 9-10 raw
    assert '<details class="superseded"><summary>1 earlier compaction, superseded</summary>' in page
    assert "turns 2-8" in page and "superseded by the compaction of turns 2-10" in page
    assert 'id="t-11"' not in page and page.count('class="turn"') == 10  # 1, 2-10 folded inside


def test_the_project_filter_and_grouping(
    client: Client, store: tuple[User, dict[str, str]]
) -> None:
    ids = store[1]
    rows = client.api(
        "/ls?all=1&project="
        + PROJECT.replace("<", "%3C")
        .replace(">", "%3E")
        .replace("'", "%27")
        .replace(";", "%3B")
        .replace("=", "%3D")
        .replace(" ", "%20")
        .replace("/", "%2F")
    )
    assert {r["id"] for r in rows} == {ids["session"], ids["agent"]}
    assert {r["project"] for r in rows} == {PROJECT}
    none = client.api("/ls?all=1&project=(none)")
    assert [r["id"] for r in none] == [ids["twice"]]
    page = client.page("/?all=1&group=project")
    inert(page)
    assert page.count('<tr class="group">') == 2
    assert '<span class="tool claude-code">claude-code</span>' in page
    assert '<span class="tool jp">jp</span>' in page


def follow(page: str, root: str) -> str:
    """The address a followed page asks, as a path of the site (less this run's root)."""
    found = re.search(r'data-live="([^"]+)"', page)
    assert found is not None
    return unrooted(html.unescape(found.group(1)), root)


def unrooted(path: str, root: str) -> str:
    assert path.startswith(root + "/"), (path, root)  # the server roots every link of its pages
    return path[len(root) :]


def test_a_followed_page_gets_its_new_turns_and_the_list_its_new_rows(
    client: Client, store: tuple[User, dict[str, str]]
) -> None:
    user = store[0]
    offline = "--cfg=assistant.model.id=offline/echo"
    user.ok(offline, "q", "--new", "followed from elsewhere")
    cid = user.active()
    page = client.page(f"/c/{cid}")
    assert f'<script src="{client.root}/static/live.js" defer></script>' in page
    asked, listed = follow(page, client.root), follow(client.page("/"), client.root)
    cookie = {"Cookie": client.cookie}
    assert client.get(asked, cookie)[:3:2] == (204, "")  # nothing moved: a refs check
    assert client.get(listed, cookie)[0] == 204
    user.ok(offline, "q", f"a hostile turn {SCRIPT}")
    status, headers, body = client.get(asked, cookie)
    assert status == 200 and 'id="t-2"' in body and 'id="t-1"' in body  # the last shown, redone
    assert "&lt;script&gt;document.title" in body and "<script" not in body
    after = unrooted(headers["X-Next"], client.root)
    assert after.startswith(f"/live/c/{cid}?") and client.get(after, cookie)[0] == 204
    user.ok(offline, "q", "--new", "a conversation that appears")
    status, headers, body = client.get(listed, cookie)
    assert status == 200 and user.active() in body and "a conversation that appears" in body
    assert client.get(unrooted(headers["X-Next"], client.root), cookie)[0] == 204
    user.ok(offline, "c", "compact", cid, "--turn", "1", "--summarize")
    assert client.get(after, cookie)[1].get("X-Reload") == "1"  # new blocks: a reload shows them
    assert client.get("/live/c/jp-c00000000000?tip=x", cookie)[0] == 404
    assert client.get("/live/c/..%2F..?tip=x", cookie)[0] == 404
    assert client.get(asked)[0] == 403  # no cookie, no answer


def test_a_title_edited_elsewhere_reaches_a_followed_list(
    client: Client, store: tuple[User, dict[str, str]]
) -> None:
    """An edit moves only the metadata notes' ref, no conversation's: the list's
    refs check sees it all the same, and the new title arrives escaped."""
    user = store[0]
    user.ok("--cfg=assistant.model.id=offline/echo", "q", "--new", "to be renamed")
    cid = user.active()
    listed = follow(client.page("/"), client.root)
    cookie = {"Cookie": client.cookie}
    assert client.get(listed, cookie)[0] == 204
    user.ok("c", "edit", cid, "--title", f"renamed {SCRIPT}")
    status, headers, body = client.get(listed, cookie)
    assert status == 200 and "renamed &lt;script&gt;document.title" in body
    assert "<script" not in body
    assert client.get(unrooted(headers["X-Next"], client.root), cookie)[0] == 204
    user.ok("c", "edit", cid, "--pin")
    assert client.get(unrooted(headers["X-Next"], client.root), cookie)[0] == 200


def test_a_project_stores_conversations_belong_to_its_project(tmp_path: Path) -> None:
    user = User(tmp_path, "project")
    project = tmp_path / f"app-{SCRIPT.replace('/', '')}"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    proc = user.run("init", "--here", cwd=project, drop=("JP_STORE",))
    assert proc.returncode == 0, proc.stderr
    user.env["JP_STORE"] = str(project / ".git")
    user.ok("--cfg=assistant.model.id=offline/echo", "q", "--new", "in the project")
    with serving(user) as (url, _proc):
        client = Client(url)
        assert [r["project"] for r in client.api("/ls")] == [str(project)]
        page = client.page("/?group=project")
        inert(page)
        assert "app-&lt;script&gt;document.title=&#x27;pwned&#x27;" in page  # the folder, as text
