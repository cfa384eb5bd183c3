"""Browser tests: real daphne + Celery worker, real headless Chromium (Debian's, never downloaded).

Screenshots go to `test-artifacts/e2e/` (git-ignored) so a person can look at them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live import celery_worker, daphne, free_port, port_open, running, wait_until

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "test-artifacts" / "e2e"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop of its own; the ORM calls the tests make between
    # browser steps are ordinary synchronous code.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def site(transactional_db: Any, log_dir: Path) -> Iterator[str]:
    """A running site (daphne for HTTP + WebSocket, a Celery worker for the timers)."""
    port = free_port()
    with running(daphne(log_dir, port), celery_worker(log_dir)):
        wait_until(lambda: port_open(port), 30, "daphne to listen")
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
