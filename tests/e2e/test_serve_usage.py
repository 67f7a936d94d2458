"""`jp serve`'s usage page over a real socket: the figures of `jp usage --by day`
on the project's own small session files (worked out by hand in test_usage.py),
the filters, a model named to run a script shown as text, bad filters refused."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from porcelain.render.usageview import cost
from tests.e2e.harness import User
from tests.e2e.serve.store import serving
from tests.e2e.test_serve import Client
from tests.e2e.test_usage import BY_DAY_UTC, COUNTS, imported

pytestmark = pytest.mark.e2e

EVIL = '<img src=x onerror="alert(1)"></title><script>alert(2)</script>'


def evil_model(root: Path) -> Path:
    """A JP conversation whose one answer names a model that is markup."""
    events = [
        {"type": "turn_start", "timestamp": "2026-03-05 10:00:00.0"},
        {"type": "chat_request", "timestamp": "2026-03-05 10:00:01.0", "content": "hi"},
        {
            "type": "chat_response",
            "timestamp": "2026-03-05 10:00:02.0",
            "message": "an answer from a model with a hostile name",
            "metadata": {"usage": {"input_tokens": 3, "output_tokens": 4}, "model": EVIL},
        },
    ]
    folder = root / "evil"
    folder.mkdir()
    (folder / "events.json").write_text(json.dumps(events))
    (folder / "metadata.json").write_text(json.dumps({"title": "evil model"}))
    return folder


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Client, User]]:
    root = tmp_path_factory.mktemp("usage")
    user = User(root)
    user.ok("init")
    imported(user)
    user.ok("conversation", "import", str(evil_model(root)))
    user.env["TZ"] = "UTC"
    with serving(user) as (url, _proc):
        yield Client(url), user


WANT = [*BY_DAY_UTC, ("2026-03-05", (3, 4, 0, 0), None)]


def test_the_page_and_its_json_give_jp_usage_figures(site: tuple[Client, User]) -> None:
    client, user = site
    data = client.api("/usage")
    got = [(r["period"], tuple(r[k] for k in COUNTS), r["cost_usd"]) for r in data["rows"]]
    assert [(p, c) for p, c, _ in got] == [(p, c) for p, c, _ in WANT]
    for (_, _, spent), (_, _, expected) in zip(got, WANT, strict=True):
        assert spent == (pytest.approx(expected) if expected is not None else None)
    assert data["rows"] == json.loads(user.ok("-F", "json", "usage", env={"TZ": "UTC"}))
    assert data["total"]["cost_usd"] is None  # two days have a model without a price
    page = client.page("/usage")
    assert "<svg" in page and page.count('class="bar"') >= 5  # a segment per day and model
    assert "$0.0023" in page and "$0.0019" in page  # 0.002267 and 0.00185, in dollars
    assert "no price (mystery-model-1)" in page
    assert "2,400" in page and "1,000" in page
    assert f'href="{client.root}/usage"' in client.page("/")  # the header's nav, rooted


def test_a_hostile_model_name_is_text(site: tuple[Client, User]) -> None:
    client, _ = site
    page = client.page("/usage")
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page  # in the legend, table and tooltip
    assert page.count("<script") == 0  # the page runs nothing (no live script either)
    assert client.api("/usage")["rows"][-1]["models"] == [EVIL]  # JSON holds it as it is


def test_filters_as_the_command_has_them(site: tuple[Client, User]) -> None:
    client, user = site
    only = client.api("/usage?since=2026-03-02&until=20260302")
    assert [r["period"] for r in only["rows"]] == ["2026-03-02"]
    codex = client.api("/usage?tool=codex")
    assert [(r["period"], r["cost_usd"]) for r in codex["rows"]] == [
        ("2026-03-03", pytest.approx(0.00185))
    ]
    both = client.api("/usage?tool=codex&tool=jp&since=2026-03-03")
    cli = user.ok(
        "-F", "json", "usage", "--tool", "codex", "--tool", "jp", "--since", "2026-03-03",
        env={"TZ": "UTC"},
    )  # fmt: skip
    assert both["rows"] == json.loads(cli)
    assert 'value="codex" checked' in client.page("/usage?tool=codex")
    for bad in (
        "since=March",
        "until=2026-02-30",
        "tool=%3Cb%3E",
        "since=2026-03-04&until=2026-03-01",
    ):
        status, headers, body = client.get(f"/usage?{bad}", {"Cookie": client.cookie})
        assert status == 400, (bad, status, body)
        assert headers["Content-Type"].startswith("text/plain")


def test_a_conversation_page_shows_its_total(site: tuple[Client, User]) -> None:
    client, user = site
    rows = json.loads(user.ok("-F", "json", "conversation", "ls", "--all"))
    for row in rows:
        shown = json.loads(user.ok("-F", "json", "conversation", "show", row["id"]))
        total = shown["usage_total"]
        page = client.page(f"/c/{row['id']}")
        if total is None:
            assert "Spent:" not in page
            continue
        counts = f"in {total['input_tokens']:,}, out {total['output_tokens']:,}, "
        assert f"Spent: {counts}" in page, row
        if total["cost_usd"] is None:
            assert "tokens: no price (" in page
        else:
            assert f"tokens: {html.escape(cost(total['cost_usd']))} (" in page
    evil = next(r["id"] for r in rows if r.get("title") == "evil model")
    page = client.page(f"/c/{evil}")
    assert "Spent: in 3, out 4, cache write 0, cache read 0 tokens: no price (&lt;img" in page
    assert "<img src=x" not in page
