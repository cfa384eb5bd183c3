"""Fixtures shared by every test: a real Redis (embedded unless REDIS_URL is set).

Also the Hypothesis profiles. `default` for a developer's run, `ci` (chosen when `CI` is set, as
`.ci/run` runs) for CI: neither has a deadline nor the too-slow health check, because both time
examples on the wall clock and fail a correct test on a machine another process keeps busy
(timing belongs in `bench/`). A test's own `@settings(max_examples=...)` still wins; `ci` prints
the blob that reproduces a failure, since a CI run cannot be re-run on the spot.
`HYPOTHESIS_PROFILE=name` chooses a profile explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from crisp_site import embedded_redis
from tests.depth import PROFILE

_UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
hypothesis_settings.register_profile("default", **_UNTIMED)
hypothesis_settings.register_profile("ci", print_blob=True, **_UNTIMED)
hypothesis_settings.load_profile(PROFILE)  # random-game counts follow it too (tests/depth.py)


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


#: pytest-timeout's limits (`timeout` in pyproject.toml, and a test's own `timeout` mark) are
#: guards against a hung test, not timing goals: a leak test that takes 15 s on a quiet machine
#: took more than 300 s on two cores shared with a dozen busy processes. Each limit is multiplied
#: by this factor (`CRISP_TEST_TIMEOUT_SCALE`), so a hang still fails long before CI's own limit.
TIMEOUT_SCALE = float(os.environ.get("CRISP_TEST_TIMEOUT_SCALE", "3"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Scale every test's hang guard by `TIMEOUT_SCALE` (a mark of its own, put first)."""
    default = getattr(config, "_env_timeout", None)
    for item in items:
        marker = item.get_closest_marker("timeout")
        kwargs = dict(marker.kwargs) if marker is not None else {}
        base = kwargs.pop("timeout", None)
        if marker is not None and marker.args:
            base = marker.args[0]
            if len(marker.args) > 1:
                kwargs["method"] = marker.args[1]
        if base is None:
            base = default
        if base:
            scaled = pytest.mark.timeout(timeout=float(base) * TIMEOUT_SCALE, **kwargs)
            item.add_marker(scaled, append=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep each phase's report on the test (`item.rep_call`...): a shared fixture's teardown
    reads whether the test failed, to print what the live processes logged during it."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(autouse=True)
def _no_language_left_behind() -> Iterator[None]:
    """Each test starts in the default language: a request through Django's test client leaves
    its language active in the thread (LocaleMiddleware activates it and never deactivates), so
    a later test rendering a template without a request would speak it -- in whatever order the
    xdist workers happen to run the tests (CI saw a Russian `_after_game.html`)."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture
def redis_client(redis_server: str) -> redis.Redis:
    return redis.Redis.from_url(redis_server)


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """Where the logs of processes a test starts go (printed when the test fails)."""
    return tmp_path / "logs"
