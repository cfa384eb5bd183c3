"""Real processes for tests: daphne, Celery workers, with the test database and Redis.

Tests that use these must use the `transactional_db` fixture (or `live_server`), so what they
write is committed and visible to the other processes.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

from crisp_site.run import die_with_parent

BASE_DIR = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def database_url() -> str:
    """A DATABASE_URL naming the test database the current test process is using."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


def process_env(**extra: str) -> dict[str, str]:
    """Environment for a child process that shares this test's database and Redis."""
    env = dict(os.environ)
    # Set by the browser tests for their own process only; never wanted in a server process.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    # The child is no xdist worker: it gets its worker's whole isolation name instead, so it uses
    # the same Redis socket, Celery queue and channel prefix as the test that started it.
    env.pop("PYTEST_XDIST_WORKER", None)
    env.update(
        CRISP_TEST_ISOLATION=settings.TEST_ISOLATION,
        DJANGO_SETTINGS_MODULE="crisp_site.test_settings",
        DATABASE_URL=database_url(),
        REDIS_URL=settings.REDIS_URL,
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


class LiveProcess:
    """A child process in its own process group, stopped (group and all) by `stop()`."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log_dir: Path) -> None:
        self.name = name
        self.args = args
        self.env = env
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"{name}-{os.getpid()}-{time.monotonic_ns()}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> LiveProcess:
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            self.args,
            env=self.env,
            cwd=BASE_DIR,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # SIGTERM when this test process dies, even killed: an interrupted run (a Ctrl-C'd
            # xdist run, a CI timeout) left daphne and Celery workers holding its test database.
            preexec_fn=die_with_parent,
        )
        log.close()
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL, as a crash would: no warm shutdown, nothing acknowledged."""
        if self.alive():
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self, timeout: float = 15) -> None:
        if not self.alive():
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()


def celery_worker(log_dir: Path, name: str = "w1", **env: str) -> LiveProcess:
    return LiveProcess(
        f"celery-{name}",
        [
            str(BIN / "celery"),
            "-A",
            "crisp_site",
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            "2",
            "--pool",
            "threads",
            "--without-mingle",
            "--without-gossip",
            "--hostname",
            f"{name}-{os.getpid()}@%h",
            "--queues",
            settings.CELERY_TASK_DEFAULT_QUEUE,
        ],
        process_env(**env),
        log_dir,
    )


def celery_beat(log_dir: Path, name: str = "beat", **env: str) -> LiveProcess:
    """Celery beat (the periodic sweep), its schedule file in the log folder.

    `CRISP_SWEEP_SECONDS` in `env` shortens the sweep period for a test.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    return LiveProcess(
        f"celery-{name}",
        [
            str(BIN / "celery"),
            "-A",
            "crisp_site",
            "beat",
            "--loglevel",
            "INFO",
            "--schedule",
            str(log_dir / f"{name}-{os.getpid()}-schedule"),
        ],
        process_env(**env),
        log_dir,
    )


def daphne(
    log_dir: Path, port: int, name: str = "daphne", *, reuse_port: bool = False, **env: str
) -> LiveProcess:
    """daphne as production runs it: through crisp_site.serve (clean WebSocket closes).
    ``reuse_port``: one of several daphnes on one port (README, "Scaling out")."""
    return LiveProcess(
        name,
        [
            str(BIN / "python"),
            "-m",
            "crisp_site.serve",
            *(["--reuse-port"] if reuse_port else []),
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "crisp_site.asgi:application",
        ],
        process_env(**env),
        log_dir,
    )


@contextmanager
def running(*processes: LiveProcess) -> Iterator[tuple[LiveProcess, ...]]:
    """Start the processes; always stop them, and print their logs if the test failed."""
    try:
        for process in processes:
            process.start()
        yield processes
    except BaseException:
        for process in processes:
            print(f"----- {process.name} log -----\n{process.log()}")
        raise
    finally:
        for process in processes:
            process.stop()


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0
