"""`jp conversation share`: one conversation as one self-contained HTML page.

The page is the web view's transcript (``pages/transcript.py``: Markdown
rendered without raw HTML or images, reasoning and tool calls folded) with the
stylesheet inline and a Content-Security-Policy that lets it load nothing, from
anywhere: no script, no font, no image, no request to any origin when opened.
It links nowhere inside jp (there is no server behind it).  The events it is
given are already redacted (``app/redaction.py``); this module only draws.
"""

from __future__ import annotations

from collections.abc import Sequence

from gitstore import Event
from porcelain.serve.html import Markup, tag

# nothing may be fetched: inline style only, no script, no image, no frame, no form target
POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def _stylesheet() -> str:
    # lazy: the resource reader and pygments load only for a share
    from importlib.resources import files

    from porcelain.serve.markdown import code_style  # lazy: pygments, for a share only

    own = files("porcelain.serve").joinpath("static/style.css").read_text()
    return own + "\n" + code_style()


def page(title: str, cid: str, events: Sequence[Event], note: str) -> str:
    """The whole page: ``title`` (untrusted, escaped), the turns, ``note`` at the foot."""
    from porcelain.serve.pages.transcript import whole  # lazy: the page modules, for a share only

    css = _stylesheet().replace("</", "<\\/")  # jp's own CSS; never ends the element early
    head = Markup(
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        '<meta name="referrer" content="no-referrer">'
        f"<style>{css}</style>"
    )
    body = Markup(
        tag("h1", title)
        + tag("p", f"Conversation {cid}, shared from jp.", class_="crumbs")
        + whole(events)
        + tag("footer", tag("p", note))
    )
    doc = tag(
        "html",
        Markup(tag("head", Markup(head + tag("title", f"{title} · jp"))) + tag("body", tag("main", body))),
        lang="en",
    )
    return "<!doctype html>\n" + doc
