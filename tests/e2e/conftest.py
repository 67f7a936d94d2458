"""Fixtures of the end-to-end tests; the helpers themselves live in harness.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import JP, User, warm_runtime
from tests.support.fake_messages import FakeMessages
from tests.support.servers.fixtures import Remote
from tests.support.sync_machine import Machine


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session", autouse=True)
def _jp_installed() -> None:
    if not JP.exists():
        pytest.fail(f"{JP} is missing: install the project in this environment (make dev)")


@pytest.fixture
def user(tmp_path: Path) -> User:
    """A sealed user with an initialised store and no API key (the offline model)."""
    person = User(tmp_path)
    person.ok("init")
    return person


@pytest.fixture(params=["in-process", "warm"])
def model_process(request: pytest.FixtureRequest, user: User) -> Iterator[str]:
    """Run the test twice: the provider called by `jp q` itself, then through the
    warm model process (started by the first query, reused by the next)."""
    if request.param == "warm":
        with warm_runtime(user):
            yield "warm"
    else:
        yield "in-process"


@pytest.fixture
def pinned(tmp_path: Path) -> User:
    """A sealed user whose `jp` runs on a seeded clock: whole outputs can be compared."""
    person = User(tmp_path, pinned=True)
    person.ok("init")
    return person


@pytest.fixture
def fake() -> Iterator[FakeMessages]:
    with FakeMessages() as server:
        yield server


@pytest.fixture
def online(user: User, fake: FakeMessages) -> User:
    """The same user, with the real SDK pointed at the loopback fake."""
    user.connect(fake.env())
    return user


@pytest.fixture
def pair(tmp_path: Path, bare_remote: Remote) -> tuple[Machine, Machine, Path]:
    """Two sealed machines (laptop, desktop) sharing one bare remote: a path, or with
    ``@every_remote`` also the same repository over SSH and HTTP (its path is returned
    for plain git checks)."""
    url, env = bare_remote.url, bare_remote.env
    laptop = Machine(tmp_path / "laptop", url, env)
    return laptop, Machine(tmp_path / "desktop", url, env), bare_remote.path
