"""Fixtures of the gitstore unit tests: a fresh bare store per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gitstore import faults
from gitstore.store.core import Store
from gitstore.store.repo import init_bare


@pytest.fixture
def path(tmp_path: Path) -> Path:
    store_path = tmp_path / "store.git"
    init_bare(store_path)
    return store_path


@pytest.fixture
def store(path: Path) -> Store:
    return Store(path)


@pytest.fixture(autouse=True)
def _no_fault_hook() -> Iterator[None]:
    yield
    faults.install(None)
