"""Browser tests: real daphne + Celery worker, real headless Chromium (Debian's, never downloaded).

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

from tests.processes import celery_worker, daphne, free_port, port_open, running, wait_until

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


class Site:
    """A running site: daphne (HTTP + WebSocket) and a Celery worker (the timers)."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.daphne = daphne(log_dir, self.port)

    def stop_daphne(self) -> None:
        self.daphne.kill()  # as a crash would: the browsers see their sockets drop
        wait_until(lambda: not port_open(self.port), 15, "daphne to stop")

    def start_daphne(self) -> None:
        self.daphne = daphne(self.log_dir, self.port, name="daphne-again").start()
        wait_until(lambda: port_open(self.port), 30, "daphne to listen again")


@pytest.fixture
def live_site(transactional_db: Any, log_dir: Path) -> Iterator[Site]:
    site = Site(log_dir)
    with running(site.daphne, celery_worker(log_dir)):
        wait_until(lambda: port_open(site.port), 30, "daphne to listen")
        try:
            yield site
        finally:
            # Browsers first, so daphne has no open sockets to wait for when it stops.
            while OPEN_CONTEXTS:
                with contextlib.suppress(Exception):
                    OPEN_CONTEXTS.pop().close()
            site.daphne.stop()


@pytest.fixture
def site(live_site: Site) -> str:
    return live_site.url


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
