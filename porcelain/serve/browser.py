"""`jp serve --open`: a browser started on a file, never on the token's URL.

A program's command line is readable by every user of the machine for as long
as it runs (`ps`, /proc), so the URL with its token is never one.  The browser
is given a page in a private folder (0700, the file 0600) that sends it on to
the URL, as Jupyter's launcher does; the folder goes when the server stops.
The browser is started from a thread: `webbrowser` waits for a console
browser, and the server must serve meanwhile.
"""

from __future__ import annotations

import html
import os
import shutil
import tempfile
import threading
from pathlib import Path

PAGE = (
    '<!doctype html>\n<html><head><meta charset="utf-8">'
    '<meta name="referrer" content="no-referrer">'
    '<meta http-equiv="refresh" content="0;url={url}">'
    "<title>jp serve</title></head>\n"
    '<body><p>Opening <a href="{url}">the store</a>...</p></body></html>\n'
)


class Launch:
    """The page a browser was started on; ``close`` removes it."""

    def __init__(self, url: str) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="jp-serve-"))  # 0700
        self.page = self.folder / "open.html"
        fd = os.open(self.page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(PAGE.format(url=html.escape(url, quote=True)))
        threading.Thread(target=_start, args=(self.page.as_uri(),), daemon=True).start()

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _start(address: str) -> None:
    import webbrowser  # lazy: only --open needs a browser

    try:
        webbrowser.open(address)
    except Exception:  # noqa: BLE001 (no browser is no reason to stop serving; the URL is printed)
        return
