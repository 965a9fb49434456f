"""Fixtures for fault tests that stop, restart or starve servers: a PostgreSQL and Redis of the
test's own (the session's servers are shared and stay up)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import Infra
from ibex_worker.db import make_engine


@pytest.fixture
def own_infra(tmp_path) -> Iterator[Infra]:
    stack = Infra(tmp_path / "own")
    stack.start()
    yield stack
    stack.stop()


@pytest.fixture
def own_engine(own_infra) -> Iterator[Any]:
    engine = make_engine(own_infra.pg.url)
    yield engine
    engine.dispose()
