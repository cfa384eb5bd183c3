"""The engine is pure: its tests need no Django, no database and no Redis.

The project-wide ``tests/conftest.py`` starts a real Redis for every test (an autouse session
fixture).  Overriding that fixture here keeps ``pytest tests/engines -p no:django`` runnable on a
machine with nothing but the standard library, pytest and hypothesis.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def redis_server() -> Iterator[None]:
    """No Redis for the rules engine."""
    yield None
