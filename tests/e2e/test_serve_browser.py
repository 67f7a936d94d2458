"""`jp serve` in a real browser (Debian's Chromium, driven by Selenium): a person
clicks list -> conversation -> tree -> review, unfolds a compaction, searches,
and sees the text while a hostile answer's script never runs and the console
stays clean.  With SERVE_SCREENSHOTS=docs/serve the pages are saved as PNGs
(docs/serve.md shows them)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import User
from tests.e2e.serve.sessions import PROJECT, SUMMARY, build_sessions
from tests.e2e.serve.store import Built, build, serving

pytestmark = pytest.mark.e2e
DRIVER = Path("/usr/bin/chromedriver")
HOW = "the browser tests need Chromium: apt-get install chromium chromium-driver (make servers)"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1200,800",
)

if not DRIVER.exists() or shutil.which("chromium") is None:
    pytest.skip(HOW, allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver", reason="pip install selenium (the dev extra)")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.wait import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("browser"))


@contextmanager
def chromium(user: User) -> Iterator[tuple[Any, str]]:
    """A fresh headless Chromium on `jp serve` of ``user``'s store, logged in."""
    profile = tempfile.mkdtemp(prefix="jp-chromium-")
    options = webdriver.ChromeOptions()
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.binary_location = shutil.which("chromium") or "chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=str(DRIVER))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        with serving(user) as (url, _proc):
            driver.get(url)
            yield driver, url.split("/?")[0]
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser(built: Built) -> Iterator[tuple[Any, str]]:
    with chromium(built.user) as found:
        yield found


@pytest.fixture(scope="module")
def sessions(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Any, str, User, dict[str, str]]]:
    root = tmp_path_factory.mktemp("browser-sessions")
    user = User(root, "serve")
    user.ok("init", str(user.store))
    ids = build_sessions(user, root)
    with chromium(user) as (driver, base):
        yield driver, base, user, ids


def shot(driver: Any, name: str) -> None:
    folder = os.environ.get("SERVE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / f"{name}.png"))


def clean_console(driver: Any) -> None:
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def loaded(driver: Any) -> bool:
    return bool(driver.execute_script("return document.readyState") == "complete")


def not_pwned(driver: Any) -> None:
    assert driver.title != "pwned"  # the script would have set it to exactly that
    assert driver.execute_script("return window.jpPwned === undefined")


def test_list_conversation_tree_review(browser: tuple[Any, str], built: Built) -> None:
    driver, base = browser
    assert "Conversations" in driver.title
    listed = driver.find_element(By.TAG_NAME, "main").text
    assert "Main line" in listed
    assert "title <script>" in listed, listed  # the hostile title, shown as text
    not_pwned(driver)
    shot(driver, "list")
    driver.find_element(By.LINK_TEXT, "Main line").click()
    assert driver.current_url.endswith(f"/c/{built.main}")
    block = driver.find_element(By.CSS_SELECTOR, "section.compaction")
    fold = block.find_element(By.CSS_SELECTOR, "details.raw")
    assert not fold.find_element(By.ID, "t-2").is_displayed()
    fold.find_element(By.TAG_NAME, "summary").click()
    assert fold.find_element(By.ID, "t-2").is_displayed()
    assert "question 2" in fold.text
    shot(driver, "conversation")
    driver.find_element(By.LINK_TEXT, "Tree").click()
    svg = driver.find_element(By.CSS_SELECTOR, "svg.tree")
    assert len(svg.find_elements(By.CSS_SELECTOR, "rect.node")) == 3
    shot(driver, "tree")
    driver.find_element(By.LINK_TEXT, "Compactions and reviews").click()
    main = driver.find_element(By.TAG_NAME, "main").text
    assert "Proposal 3" in main and "by `jp" in main
    driver.find_element(By.CSS_SELECTOR, "details.proposal-diff summary").click()
    assert driver.find_elements(By.CSS_SELECTOR, "details.proposal-diff ins")
    shot(driver, "review")
    driver.find_element(By.LINK_TEXT, "Size").click()
    assert driver.find_elements(By.CSS_SELECTOR, "svg.chart polyline.tokens")
    shot(driver, "size")
    clean_console(driver)


def test_search_and_a_hostile_conversation(browser: tuple[Any, str], built: Built) -> None:
    driver, base = browser
    driver.get(base + "/")
    box = driver.find_element(By.NAME, "q")
    box.send_keys("needle-in-haystack")
    box.submit()  # a script's submit: Selenium does not wait for the page it loads
    WebDriverWait(driver, 30).until(expected_conditions.staleness_of(box))
    WebDriverWait(driver, 30).until(loaded)
    rows = driver.find_elements(By.CSS_SELECTOR, "table.list tbody tr")
    assert len(rows) == 1 and "needle-in-haystack" in rows[0].text
    shot(driver, "search")
    rows[0].find_element(By.CSS_SELECTOR, "a.title").click()
    answer = driver.find_element(By.CSS_SELECTOR, ".answer")
    assert "<script>document.title" in answer.text
    assert not driver.find_elements(By.CSS_SELECTOR, "main img")
    links = answer.find_elements(By.TAG_NAME, "a")
    hrefs = [a.get_attribute("href") for a in links]  # no javascript: link; the image a link
    assert hrefs == ["https://example.invalid/x", "https://example.invalid/p.png"]
    assert {a.get_attribute("rel") for a in links} == {"noopener noreferrer"}
    assert answer.find_elements(By.CSS_SELECTOR, ".hl")
    call = driver.find_element(By.CSS_SELECTOR, "details.tool")
    line = call.find_element(By.CSS_SELECTOR, "summary .tool-line").text
    assert line == '{"path": "<script>document.title=\'pwned\';window.jpPwned=1</script>"}'
    call.find_element(By.TAG_NAME, "summary").click()  # the result is folded under its call
    assert "show all" in call.find_element(By.CSS_SELECTOR, ".tool-output").text
    not_pwned(driver)
    shot(driver, "hostile")
    driver.get(base + "/ops")
    assert "compact --continue" in driver.find_element(By.TAG_NAME, "main").text
    clean_console(driver)


def unfold(element: Any) -> None:
    element.find_element(By.TAG_NAME, "summary").click()


def test_an_imported_session_with_tool_calls_and_images(sessions: Any) -> None:
    driver, base, _user, ids = sessions
    driver.get(base + "/?all=1")
    listed = driver.find_element(By.TAG_NAME, "main").text
    assert f"subagent (Explore) of {ids['session']}" in listed and "claude-code" in listed
    driver.find_element(By.LINK_TEXT, SUMMARY).click()
    assert driver.current_url.endswith(f"/c/{ids['session']}")
    calls = driver.find_elements(By.CSS_SELECTOR, "details.tool")
    names = [c.find_element(By.CSS_SELECTOR, ".tool-name").text for c in calls]
    assert names == ["Bash", "Read", "mcp__github__search_issues", "Task"]
    assert "<script>document.title" in calls[0].find_element(By.CSS_SELECTOR, ".tool-line").text
    read = calls[1]
    assert not read.find_element(By.CSS_SELECTOR, ".tool-output").is_displayed()
    unfold(read)  # its result, folded under it: the screenshot it returned
    picture = read.find_element(By.CSS_SELECTOR, ".tool-output img")
    assert picture.is_displayed()
    assert driver.execute_script("return arguments[0].naturalWidth", picture) == 40  # loaded
    assert "not an image" in read.text  # the bytes that only claimed to be one
    prompt = driver.find_element(By.CSS_SELECTOR, ".request img")
    assert driver.execute_script("return arguments[0].naturalWidth", prompt) == 6
    not_pwned(driver)
    shot(driver, "session")
    clean_console(driver)


def test_a_conversation_compacted_twice(sessions: Any) -> None:
    driver, base, _user, ids = sessions
    driver.get(base + f"/c/{ids['twice']}")
    blocks = driver.find_elements(By.CSS_SELECTOR, "section.compaction > h2")
    assert [b.text for b in blocks] == ["turns 2-10, compacted"]
    old = driver.find_element(By.CSS_SELECTOR, "details.superseded")
    unfold(old)
    assert "turns 2-8" in old.text and "superseded by the compaction of turns 2-10" in old.text
    shot(driver, "compacted-twice")
    clean_console(driver)


def test_the_project_filter(sessions: Any) -> None:
    driver, base, _user, ids = sessions
    driver.get(base + "/?all=1&group=project")
    groups = [g.text for g in driver.find_elements(By.CSS_SELECTOR, "tr.group")]
    assert groups == [f"project {PROJECT}", "project (none)"]
    shot(driver, "projects")
    driver.find_element(By.CSS_SELECTOR, ".project a").click()
    WebDriverWait(driver, 30).until(loaded)
    rows = driver.find_elements(By.CSS_SELECTOR, "table.list tbody tr:not(.group)")
    assert {r.get_attribute("id") for r in rows} == {f"r-{ids['session']}", f"r-{ids['agent']}"}
    not_pwned(driver)
    clean_console(driver)


def test_a_live_page_grows_while_it_is_open(sessions: Any) -> None:
    driver, base, user, _ids = sessions
    offline = "--cfg=assistant.model.id=offline/echo"
    user.ok(offline, "q", "--new", "a session being written elsewhere")
    cid = user.active()
    driver.get(base + f"/c/{cid}")
    assert not driver.find_elements(By.ID, "t-2")
    driver.execute_script("window.scrollTo(0, 40); window.jpMark = 1")  # a reload would drop it
    user.ok(offline, "q", "the second turn, written while the page is open")
    WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.ID, "t-2"))
    assert "the second turn" in driver.find_element(By.ID, "t-2").text
    assert driver.execute_script("return window.jpMark") == 1  # no reload: the same page
    shot(driver, "live")
    driver.get(base + "/")
    user.ok(offline, "q", "--new", "a conversation that appears while the list is open")
    new = user.active()
    WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.ID, f"r-{new}"))
    clean_console(driver)


def test_the_usage_page(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Reached from the header: a bar a day, the legend and table, the hostile model
    name as text, nothing run; the filter form narrows it to one tool."""
    from tests.e2e.test_serve_usage import EVIL, evil_model
    from tests.e2e.test_usage import imported

    root = tmp_path_factory.mktemp("browser-usage")
    user = User(root)
    user.ok("init")
    imported(user)
    user.ok("conversation", "import", str(evil_model(root)))
    user.env["TZ"] = "UTC"
    with chromium(user) as (driver, _base):
        driver.find_element(By.CSS_SELECTOR, "header nav").find_element(
            By.LINK_TEXT, "Usage"
        ).click()
        WebDriverWait(driver, 30).until(loaded)
        assert driver.title.startswith("Usage")
        assert len(driver.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar")) >= 5
        legend = driver.find_element(By.CSS_SELECTOR, "ul.legend.models").text
        assert EVIL in legend and "mystery-model-1" in legend
        rows = driver.find_elements(By.CSS_SELECTOR, "table.usage tbody tr")
        assert [r.text.split()[0] for r in rows] == [
            "2026-03-01",
            "2026-03-02",
            "2026-03-03",
            "2026-03-05",
        ]
        assert "no price (mystery-model-1)" in rows[1].text
        not_pwned(driver)
        assert driver.execute_script("return typeof alert") == "function"  # nothing replaced it
        shot(driver, "usage")
        driver.find_element(By.CSS_SELECTOR, "input[name=tool][value=codex]").click()
        button = driver.find_element(By.CSS_SELECTOR, "form.filters button")
        button.click()
        WebDriverWait(driver, 30).until(expected_conditions.staleness_of(button))
        WebDriverWait(driver, 30).until(loaded)
        rows = driver.find_elements(By.CSS_SELECTOR, "table.usage tbody tr")
        assert [r.text.split()[0] for r in rows] == ["2026-03-03"]
        clean_console(driver)
