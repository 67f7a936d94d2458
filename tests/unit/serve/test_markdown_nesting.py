"""The web view hides nothing of an answer: markdown-it drops whatever is nested
deeper than its nesting limit, so a block nested deeper than the terminal's
``MAX_DEPTH`` is shown as its escaped source, the blocks around it rendered."""

from __future__ import annotations

import re

from porcelain.serve.markdown import render


def words(html: str) -> set[str]:
    return set(re.findall(r"w\d+", html))


def test_a_deep_quote_and_a_deep_list_show_every_word() -> None:
    quote = "> " * 40 + "w0 deepest <script>x</script>"
    items = "".join("  " * i + f"- w{i + 1}\n" for i in range(20))
    text = f"Before **w100**\n\n{quote}\n\n{items}\nafter w200 *done*\n"
    shown = render(text)
    assert words(shown) == {f"w{i}" for i in range(21)} | {"w100", "w200"}
    assert "<strong>w100</strong>" in shown and "<em>done</em>" in shown  # the rest rendered
    assert "<script>" not in shown and "&lt;script&gt;" in shown
    assert shown.count('<pre class="md-source">') == 2


def test_nesting_within_the_limit_is_rendered() -> None:
    items = "".join("  " * i + f"- w{i}\n" for i in range(6))
    shown = render(items)
    assert "md-source" not in shown and shown.count("<ul>") == 6


def test_past_the_parsers_own_limit_the_rest_is_source_never_dropped() -> None:
    items = "".join("  " * i + f"- w{i}\n" for i in range(60))
    shown = render(f"{items}\nw999 after\n")
    assert words(shown) == {f"w{i}" for i in range(60)} | {"w999"}
