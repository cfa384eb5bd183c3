"""Fixtures shared by every test: a real Redis (embedded unless REDIS_URL is set)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings

from crisp_site import embedded_redis


@pytest.fixture(scope="session", autouse=True)
def redis_server() -> Iterator[str]:
    """The Redis the tests use: started here when the embedded default is in force."""
    started = None
    if settings.EMBEDDED_REDIS:
        started = embedded_redis.ensure_running(
            settings.EMBEDDED_REDIS_SOCKET, Path(settings.VAR_DIR) / "redis"
        )
    try:
        assert redis.Redis.from_url(settings.REDIS_URL).ping()
        yield settings.REDIS_URL
    finally:
        if started is not None:
            started.stop()


@pytest.fixture
def redis_client(redis_server: str) -> redis.Redis:
    return redis.Redis.from_url(redis_server)


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """Where the logs of processes a test starts go (printed when the test fails)."""
    return tmp_path / "logs"
