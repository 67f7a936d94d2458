"""`jp serve` against hostile input in a real browser (Debian's Chromium, by
Selenium).  The credential: a browser sends a cookie to every port of a host,
so the cookie must reach this server alone; a link in a conversation to another
server on 127.0.0.1 (another user's, say) must not hand it the token, and two
`jp serve` of two stores each keep their own credential.  Nesting: an answer
nested deeper than markdown-it's limit shows every word."""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import User
from tests.e2e.serve.store import serving
from tests.e2e.test_serve_browser import DRIVER, FLAGS

pytestmark = pytest.mark.e2e
webdriver = pytest.importorskip("selenium.webdriver", reason="pip install selenium (the dev extra)")
from selenium.webdriver.common.by import By  # noqa: E402


class Recorder(BaseHTTPRequestHandler):
    """Another server on 127.0.0.1: keeps the Cookie header of every request."""

    seen: list[tuple[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802
        self.seen.append((self.path, self.headers.get("Cookie", "")))
        body = b"<!doctype html><title>elsewhere</title><p>elsewhere</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture()
def recorder() -> Iterator[tuple[int, list[tuple[str, str]]]]:
    seen: list[tuple[str, str]] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("R", (Recorder,), {"seen": seen}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def driver() -> Iterator[Any]:
    if not DRIVER.exists() or shutil.which("chromium") is None:
        pytest.skip("the browser tests need Chromium (make servers)")
    profile = tempfile.mkdtemp(prefix="jp-chromium-")
    options = webdriver.ChromeOptions()
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.binary_location = shutil.which("chromium") or "chromium"
    browser = webdriver.Chrome(options=options, service=webdriver.ChromeService(str(DRIVER)))
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


def one_store(root: Path, name: str, answer: str) -> User:
    """A store with one conversation, imported from a JP folder whose answer is ``answer``."""
    user = User(root, name)
    user.ok("init", str(user.store))
    folder = root / f"{name}-folder"
    folder.mkdir()
    at = "2026-02-01 10:00:0{}.5".format
    events = [
        {"type": "turn_start", "timestamp": at(1)},
        {"type": "chat_request", "timestamp": at(2), "content": "where?"},
        {"type": "chat_response", "timestamp": at(3), "message": answer},
    ]
    (folder / "events.json").write_text(json.dumps(events))
    (folder / "metadata.json").write_text(json.dumps({"title": f"Store {name}"}))
    user.import_(folder)
    return user


def test_the_token_reaches_no_other_server_and_two_servers_keep_theirs(
    tmp_path: Path, driver: Any, recorder: tuple[int, list[tuple[str, str]]]
) -> None:
    port, seen = recorder
    elsewhere = f"http://127.0.0.1:{port}"
    a = one_store(tmp_path, "a", f"see [the other server]({elsewhere}/) and {elsewhere}/x")
    b = one_store(tmp_path, "b", "a question in store b")
    with serving(a) as (url_a, _a), serving(b) as (url_b, _b):
        driver.get(url_a)
        assert "Store a" in driver.find_element(By.TAG_NAME, "main").text
        driver.get(url_b)
        assert "Store b" in driver.find_element(By.TAG_NAME, "main").text
        home_a = url_a.split("?")[0]
        driver.get(home_a)  # b's login did not replace a's credential
        assert "Store a" in driver.find_element(By.TAG_NAME, "main").text
        driver.find_element(By.LINK_TEXT, "Store a").click()
        driver.find_element(By.LINK_TEXT, "the other server").click()  # a link in an answer
        assert "elsewhere" in driver.find_element(By.TAG_NAME, "body").text
        driver.get(elsewhere + "/x")
        cookies = {c["name"]: c for c in driver.get_cookies()}
    tokens = [url.split("token=")[1] for url in (url_a, url_b)]
    assert {path for path, _ in seen} >= {"/", "/x"}
    for _path, header in seen:
        assert not any(token in header for token in tokens), header
    assert not cookies  # at 127.0.0.1:PORT/ the browser holds none of jp's for this path


def test_a_deeply_nested_answer_shows_every_word(tmp_path: Path, driver: Any) -> None:
    quote = "> " * 40 + "deepest-quote-word"
    items = "".join("  " * i + f"- item{i}\n" for i in range(30))
    user = one_store(tmp_path, "n", f"Start.\n\n{quote}\n\n{items}\nthe-last-word\n")
    with serving(user) as (url, _proc):
        driver.get(url)
        driver.find_element(By.LINK_TEXT, "Store n").click()
        shown = driver.find_element(By.CSS_SELECTOR, ".answer").text
    for word in ("Start.", "deepest-quote-word", "item0", "item29", "the-last-word"):
        assert word in shown, word
