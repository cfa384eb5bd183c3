"""Browser tests: real daphne + Celery worker, real headless Chromium (Debian's, never downloaded).

One site (daphne + Celery worker) serves every browser test of this package in a test process
(under xdist, the one worker that runs the `browser` group: tests/conftest.py; isolated by
`CRISP_TEST_ISOLATION`): starting and stopping both
for each test cost more than many of the tests. Package scope, not session: the site's worker
must be gone before other packages' tests run, which start workers of their own (or prove what
happens with none) on the same queue.

Between tests the state is reset as it was when each test had its own site: `transactional_db`
empties the database after the test (ids are not reused, so a game's leftovers in Redis --
presence, a timer still due -- name no game of a later test and are dropped as stale), the
test's browser contexts are closed, and a daphne or worker the test stopped or killed is started
again. When a test fails, what the site logged during it is printed, as the per-test processes'
logs were.

Screenshots go to `test-artifacts/e2e/` (git-ignored) so a person can look at them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.processes import (
    LiveProcess,
    celery_worker,
    daphne,
    free_port,
    port_open,
    wait_until,
)

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "test-artifacts" / "e2e"
#: Browser contexts the current test opened (tests.e2e.test_play.log_in); closed at teardown.
OPEN_CONTEXTS: list[Any] = []
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="package")
def chromium() -> Iterator[Any]:
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop of its own in this thread; the ORM calls the tests
    # make between browser steps are ordinary synchronous code. Package scope (not session): the
    # loop must be gone before other packages' async tests run, and so must this variable.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=executable, args=CHROMIUM_ARGS, headless=True
            )
            try:
                yield browser
            finally:
                browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


def sign_in(context: Any, site: str, username: str) -> None:
    """Sign ``username`` in to ``context`` as the log-in form does, without the form: a session
    made on the server (`Client.force_login`, the same `login()`) and the cookies the form's
    response sets -- the session and the profile's language (`accounts.views.remember_language`).
    Two page loads and a password hash fewer per browser; the form itself is driven in the
    tests that are about it (tests/e2e/test_play.py's round, test_game_night.py's invite link
    signed out, the ``form=True`` callers)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.get(username=username)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies(
        [
            {"name": settings.SESSION_COOKIE_NAME, "value": session, "url": site},
            {"name": settings.LANGUAGE_COOKIE_NAME, "value": user.language, "url": site},
        ]
    )


def site_environ() -> dict[str, str]:
    """The part of this process's environment the site's processes read as settings (`CRISP_*`,
    e.g. a test's `CRISP_BOT_THINK_MS`): what they were started with must match it."""
    return {k: v for k, v in os.environ.items() if k.startswith("CRISP_")}


class Site:
    """A running site: daphne (HTTP + WebSocket) and a Celery worker (the timers)."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.daphne = daphne(log_dir, self.port)
        self.worker = celery_worker(log_dir)
        self.environ = site_environ()

    def stop_daphne(self) -> None:
        self.daphne.kill()  # as a crash would: the browsers see their sockets drop
        wait_until(lambda: not port_open(self.port), 15, "daphne to stop")

    def start_daphne(self) -> None:
        self.daphne = daphne(self.log_dir, self.port, name="daphne-again").start()
        wait_until(lambda: port_open(self.port), 30, "daphne to listen again")

    def processes(self) -> list[LiveProcess]:
        return [self.daphne, self.worker]

    def ensure_running(self) -> None:
        """Start again whatever a test left stopped or killed (a crash test's daphne), and
        both processes if the test asks for other settings through the environment than they
        were started with (`fast_site`'s quick computer players): a shared site must not hand
        a test the previous test's settings."""
        if site_environ() != self.environ:
            for process in self.processes():
                process.stop()
            wait_until(lambda: not port_open(self.port), 15, "the old daphne's port to close")
            self.environ = site_environ()
            self.daphne = daphne(self.log_dir, self.port, name="daphne-env").start()
            self.worker = celery_worker(self.log_dir, name="w-env").start()
        if not self.daphne.alive():
            self.daphne.stop()
            wait_until(lambda: not port_open(self.port), 15, "the old daphne's port to close")
            self.daphne = daphne(self.log_dir, self.port, name="daphne-again").start()
        if not self.worker.alive():
            self.worker = celery_worker(self.log_dir, name="w-again").start()
        wait_until(lambda: port_open(self.port), 60, "daphne to listen")

    def log_marks(self) -> dict[Path, int]:
        """How far each process's log has been written: the start of the next test's share."""
        return {
            p.log_path: p.log_path.stat().st_size for p in self.processes() if p.log_path.exists()
        }

    def logs_since(self, marks: dict[Path, int]) -> str:
        """What the processes logged after `marks` (all of it for a process started since)."""
        parts = []
        for process in self.processes():
            with contextlib.suppress(OSError), process.log_path.open("rb") as log:
                log.seek(marks.get(process.log_path, 0))
                text = log.read().decode(errors="replace")
                parts.append(f"----- {process.name} log (this test) -----\n{text}")
        return "\n".join(parts)


@pytest.fixture(scope="package")
def shared_site(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The package's one site, on the test database (`live_site` hands it to each test)."""
    site = Site(tmp_path_factory.mktemp("live-site") / "logs")
    try:
        site.daphne.start()
        site.worker.start()
        wait_until(lambda: port_open(site.port), 60, "daphne to listen")
        yield site
    finally:
        # Not `running()`: a test may have replaced the daphne or the worker since.
        for process in site.processes():
            process.stop()


@pytest.fixture
def live_site(
    transactional_db: Any, shared_site: Site, request: pytest.FixtureRequest
) -> Iterator[Site]:
    """The running site, for this test alone: see the module's docstring for what is reset."""
    shared_site.ensure_running()
    marks = shared_site.log_marks()
    try:
        yield shared_site
    finally:
        # Browsers first, so daphne has no open sockets left when the next test begins.
        while OPEN_CONTEXTS:
            with contextlib.suppress(Exception):
                OPEN_CONTEXTS.pop().close()
        report = getattr(request.node, "rep_call", None)
        if report is None or report.failed:
            print(shared_site.logs_since(marks))
        shared_site.ensure_running()


@pytest.fixture
def site(live_site: Site) -> str:
    return live_site.url


@pytest.fixture
def fast_site(
    transactional_db: None, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> str:
    """The site, its computer players thinking 20 to 80 ms (the product's 0.7 to 2.2 s is a
    person's pace, not what a test of the table needs; a whole game in well under a minute).
    Set before the processes start: they read it from the environment, so a test with other
    settings than the last one's restarts both (`Site.ensure_running`, about 3 s): the modules
    that use it run one after another (`SLOW_MODULES` in tests/conftest.py).
    (``transactional_db`` by name: what the test writes must be committed for the site.)"""
    monkeypatch.setenv("CRISP_BOT_THINK_MS", "20,80")
    return request.getfixturevalue("live_site").url


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
