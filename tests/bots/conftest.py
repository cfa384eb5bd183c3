"""The bots are pure like the engines: their tests need no Django, no database and no Redis.

The project-wide ``tests/conftest.py`` starts a real Redis for every test (an autouse session
fixture).  Overriding it here keeps ``pytest tests/bots -p no:django`` runnable with nothing but
the standard library, pytest and hypothesis.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def redis_server() -> Iterator[None]:
    """No Redis for the bots."""
    yield None
