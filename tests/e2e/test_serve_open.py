"""`jp serve --open`: the browser is started on a private page that redirects,
never with the token on its command line (which every local user can read),
and the server answers while a browser that waits (a console one) still runs."""

from __future__ import annotations

import http.client
import stat
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.e2e.harness import User
from tests.e2e.serve.store import serving

pytestmark = pytest.mark.e2e


def test_open_hands_the_browser_a_private_file_and_does_not_wait_for_it(tmp_path: Path) -> None:
    user = User(tmp_path)
    user.ok("init", str(user.store))
    seen = tmp_path / "browser-saw"
    browser = tmp_path / "browser.sh"  # a browser that stays until killed, as a console one does
    browser.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > {seen}.tmp\nmv {seen}.tmp {seen}\nexec sleep 60\n'
    )
    browser.chmod(0o755)
    user.env["BROWSER"] = f"{browser} %s"
    with serving(user, "--open") as (url, proc):
        for _ in range(300):
            if seen.exists():
                break
            time.sleep(0.1)
        argv = seen.read_text().split()
        parts = urlsplit(url)
        conn = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=30)
        conn.request("GET", f"{parts.path}?{parts.query}", headers={"Host": parts.netloc})
        assert conn.getresponse().status == 303  # served while the browser still runs
        conn.close()
        token = parts.query.split("token=")[1]
        assert len(argv) == 1 and token not in argv[0]
        page = Path(unquote(urlsplit(argv[0]).path))
        assert argv[0].startswith("file://") and page.exists()
        assert stat.S_IMODE(page.stat().st_mode) == 0o600
        assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
        assert url.replace("&", "&amp;") in page.read_text()  # it sends the browser on
        assert proc.poll() is None
    assert not page.exists()  # gone with the server
