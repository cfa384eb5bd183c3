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
from crisp_site.run import die_with_parent
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
        # Dies with this test process even when it is killed (an interrupted xdist run left
        # its workers' servers running, holding their sockets).
        started = embedded_redis.ensure_running(
            settings.EMBEDDED_REDIS_SOCKET, Path(settings.VAR_DIR) / "redis", die_with_parent
        )
    try:
        client = redis.Redis.from_url(settings.REDIS_URL)
        assert client.ping()
        _forget_earlier_runs_timers(client)
        yield settings.REDIS_URL
    finally:
        if started is not None:
            started.stop()


def _forget_earlier_runs_timers(client: redis.Redis) -> None:
    """Drop this run's timer keys left by an earlier run on a Redis that kept them (CI's shared
    server; the channel prefix is per worker, the same every run): the database is new, so
    game ids start again, and an earlier run's entries would fire against other games (as
    no-ops) and its per-game records would hold newer versions (games/timers.py)."""
    from games import timers

    stale = list(client.scan_iter(match=f"{timers.set_key()}*", count=1000))
    if stale:
        client.delete(*stale)


#: pytest-timeout's limits (`timeout` in pyproject.toml, and a test's own `timeout` mark) are
#: guards against a hung test, not timing goals: a leak test that takes 15 s on a quiet machine
#: took more than 300 s on two cores shared with a dozen busy processes. Each limit is multiplied
#: by this factor (`CRISP_TEST_TIMEOUT_SCALE`), so a hang still fails long before CI's own limit.
TIMEOUT_SCALE = float(os.environ.get("CRISP_TEST_TIMEOUT_SCALE", "3"))


#: Rough seconds each slow module takes on a quiet machine (issue 20's measurements, scaled from
#: loaded runs; README "Tests"), for the order below: only the ratios matter. A browser or live
#: module not listed counts as `UNLISTED`.
SLOW_MODULES = {
    "tests/history/test_history_replay.py": 45,
    "tests/history/test_replay_leaks.py": 60,
    "tests/history/test_history_export.py": 22,
    "tests/history/test_history_stats.py": 15,
    "tests/history/test_history_pages.py": 10,
    "tests/history/test_history_ratings.py": 15,
    "tests/e2e/test_game_night.py": 31,
    "tests/e2e/test_game_night_eight.py": 39,
    "tests/e2e/test_table_controller.py": 90,
    "tests/e2e/test_triple_crown.py": 40,
    "tests/e2e/test_table_layout.py": 47,
    "tests/e2e/test_specials.py": 18,
    "tests/e2e/test_cribbage.py": 20,
    "tests/e2e/test_vs_computer.py": 24,
    "tests/live/test_bot_client.py": 35,
    "tests/live/test_leaks.py": 30,
    "tests/live/test_leaks_triple_crown.py": 30,
    "tests/live/test_leaks_cribbage.py": 20,
    "tests/games/test_leak.py": 40,
    "tests/games/test_bot_fairness.py": 30,
    "tests/games/test_schema_fuzz.py": 15,
    "tests/site/test_run.py": 23,
    "tests/site/test_redis_cancel.py": 3,
    "tests/engines/cribbage/test_cribbage_machine.py": 20,
    "tests/notifications/test_leak.py": 15,
    "tests/notifications/test_turn_based_games.py": 20,
    "tests/games/test_turn_based.py": 17,
    "tests/games/test_your_move_signal.py": 15,
    "tests/e2e/test_your_move.py": 25,
    "tests/e2e/test_crisp_turn_based.py": 25,
    # Beside test_crisp_turn_based.py (the same weight, collected next): both use `fast_site`,
    # so the shared site is restarted with quick computer players once for the two, not twice.
    "tests/e2e/test_table_tools.py": 25,
}
UNLISTED = {"browser": 20, "live": 10}


def _slow_first(items: list[pytest.Item]) -> None:
    """Order the run longest first, so that `--dist loadgroup` (which hands the two workers the
    tests in this order, a unit at a time) never ends with one worker alone on a long test.
    A package's tests stay together (the browser tests share one site per package and worker)
    and so do a module's; the order within a module is kept."""

    def module_weight(item: pytest.Item) -> float:
        path = item.nodeid.split("::")[0]
        if path in SLOW_MODULES:
            return SLOW_MODULES[path]
        return max((w for m, w in UNLISTED.items() if item.get_closest_marker(m)), default=0)

    modules: dict[str, float] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        modules[path] = max(modules.get(path, 0), module_weight(item))
    packages: dict[str, float] = {}
    for path, weight in modules.items():
        package = path.rsplit("/", 1)[0]
        packages[package] = packages.get(package, 0) + weight
    order = {id(item): i for i, item in enumerate(items)}

    def key(item: pytest.Item) -> tuple[float, float, int]:
        path = item.nodeid.split("::")[0]
        return (-packages[path.rsplit("/", 1)[0]], -modules[path], order[id(item)])

    items.sort(key=key)


#: The xdist group of every browser test (`--dist loadgroup`: a group runs on one worker, one
#: test after another). Browser tests measure what a page shows and when -- an opening look on
#: screen for its memorise period, a mark that lasts seconds -- and `cpu_hog`'s tests do it with
#: every core kept busy on purpose: another browser test on the other worker (eight Chromium
#: pages, a daphne and a Celery worker of its own) would starve them beyond what they prove.
#: One group: no two browser tests ever run at once, and a worker runs one site and one Chromium.
BROWSER_GROUP = "browser"


def pytest_itemcollected(item: pytest.Item) -> None:
    """Every browser test joins `BROWSER_GROUP`."""
    if item.get_closest_marker("browser") is not None:
        item.add_marker(pytest.mark.xdist_group(BROWSER_GROUP))


def _name_the_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--dist loadgroup` finds a test's group in its id (``...::test@group``), which
    pytest-xdist's worker writes to ``item._nodeid``; pytest 9 reads the id from ``item._id``
    instead, so without this every group was silently ignored (each test went to any worker)."""
    if not getattr(config.option, "loadgroup", False):
        return  # not an xdist worker under --dist loadgroup
    from _pytest.nodeid import NodeId

    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})  # fmt: skip
        if names and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Scale every test's hang guard by `TIMEOUT_SCALE` (a mark of its own, put first), and
    order the run longest first (`_slow_first`)."""
    _slow_first(items)
    _name_the_groups(config, items)
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


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None) -> Iterator[None]:
    """pytest-django's, and before the test database is dropped the connections the database
    threads keep between calls (crisp_site/db.py) are closed: PostgreSQL refuses to drop a
    database someone is connected to."""
    yield
    from crisp_site.db import release_connections

    release_connections()
