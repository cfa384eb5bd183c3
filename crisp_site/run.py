"""`make run`: the whole site under one supervisor.

Starts, in order: the embedded Redis (only when `REDIS_URL` is unset), database migrations, then
daphne (HTTP + WebSocket), a Celery worker (timers) and Celery beat (the periodic sweep). Prints
the URL once `/healthz` is green. Ctrl-C (or SIGTERM) stops every process it started, newest
first, Redis last; further signals while stopping (make forwards one, the terminal sends
another) are ignored, so a stop always runs to its end and leaves nothing behind. A process that
dies on its own is restarted — the embedded Redis too: sockets then resubscribe and catch up
(they notice Redis's new run id) and beat's sweep fires every deadline whose timer task was lost
with it, once. One that dies five times in a minute stops the whole site with a non-zero status.
Children also get a parent-death signal, so even a SIGKILLed supervisor leaves no orphans.

Production does not run this supervisor: it runs an external Redis under its own supervision
(systemd, a managed service) and the site's processes under the platform's (README).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from crisp_site import embedded_redis

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CRISP_VAR_DIR", BASE_DIR / "var"))
BIN = Path(sys.executable).parent
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """A child's ``preexec_fn``: the kernel sends it SIGTERM when the thread that started it
    dies, so a supervisor (or a test run) killed without its cleanup leaves no process behind.
    Not Linux: no prctl; the parent's own stop handling still stops everything."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _free_port(host: str, first: int, tries: int = 20) -> int:
    for port in range(first, first + tries):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
            return port
    raise SystemExit(f"No free port from {first} to {first + tries - 1} on {host}; set PORT.")


def _health(url: str) -> dict:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - our own URL
            return json.load(response)
    except urllib.error.HTTPError as error:
        return json.load(error)
    except (urllib.error.URLError, OSError, ValueError):
        return {}


# A child that dies is restarted (a Celery worker, for one, exits when its Redis connection
# drops); one that keeps dying is a real fault, and then the whole site stops.
_RESTARTS_ALLOWED = 5
_RESTART_WINDOW = 60.0


class Supervisor:
    def __init__(self) -> None:
        self.children: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.commands: dict[str, tuple[list[str], dict[str, str]]] = {}
        self.restarts: dict[str, list[float]] = {}
        self.redis: embedded_redis.EmbeddedRedis | None = None
        self.stopping = False

    def spawn(self, name: str, args: list[str], env: dict[str, str]) -> None:
        process = subprocess.Popen(
            args, env=env, cwd=BASE_DIR, start_new_session=True, preexec_fn=die_with_parent
        )
        self.commands[name] = (args, env)
        self.children = [(n, p) for n, p in self.children if n != name] + [(name, process)]

    def _may_restart(self, name: str, status: int | None) -> bool:
        """Record a restart of `name`; False when it died too often to go on."""
        now = time.monotonic()
        recent = [t for t in self.restarts.get(name, []) if now - t < _RESTART_WINDOW]
        if len(recent) >= _RESTARTS_ALLOWED:
            print(
                f"{name} exited {len(recent) + 1} times within {_RESTART_WINDOW:.0f}s "
                f"(last status {status}); stopping.",
                flush=True,
            )
            return False
        print(f"{name} exited with status {status}; restarting it.", flush=True)
        self.restarts[name] = [*recent, now]
        return True

    def restart_dead(self) -> bool:
        """Restart the embedded Redis and every child that exited; False when one died too often.

        Redis first: a Celery worker exits when its broker goes away, and would only die again.
        """
        redis_process = self.redis.process if self.redis is not None else None
        if redis_process is not None and redis_process.poll() is not None:
            if not self._may_restart("redis", redis_process.returncode):
                return False
            self.redis.start()  # removes the dead server's socket first
        for name, process in list(self.children):
            if process.poll() is None:
                continue
            if not self._may_restart(name, process.returncode):
                return False
            self.spawn(name, *self.commands[name])
        return True

    def stop(self) -> None:
        """Stop every child, newest first, then Redis. Idempotent, and signals cannot cut it short.

        A second SIGINT/SIGTERM during a stop used to raise KeyboardInterrupt inside it and skip
        the rest (Redis was left running, and the next `make run` refused to start).
        """
        self.stopping = True
        with contextlib.suppress(ValueError):  # not the main thread: no handlers to change
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            for _name, process in reversed(self.children):
                if process.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGTERM)
            deadline = time.monotonic() + 15
            for _name, process in reversed(self.children):
                try:
                    process.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            self.children = []
        finally:
            if self.redis is not None:
                self.redis.stop()
                self.redis = None

    def run(self) -> int:
        host = os.environ.get("HOST", "127.0.0.1")
        port = _free_port(host, int(os.environ.get("PORT", "8000")))
        env = dict(os.environ)
        env.setdefault("DJANGO_SETTINGS_MODULE", "crisp_site.settings")
        env.setdefault("PYTHONUNBUFFERED", "1")
        env.setdefault("CRISP_QUIET_TASK_LINES", "1")  # crisp_site/celery.py: the URL stays in view

        def on_signal(signum: int, _frame: object) -> None:
            if not self.stopping:  # the first one stops the site; repeats change nothing
                raise KeyboardInterrupt

        # Installed explicitly: a shell that starts us in the background ignores SIGINT, and
        # Python would then never raise KeyboardInterrupt for Ctrl-C or `kill -INT`.
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        try:
            if embedded_redis.environ_url() is None:
                path = embedded_redis.socket_path(VAR_DIR, "redis")
                if embedded_redis.answers(path):
                    raise SystemExit(
                        f"Another `make run` is using {path}; stop it first (Ctrl-C there)."
                    )
                # Assigned before it starts, so a Ctrl-C during the start still stops it.
                self.redis = embedded_redis.EmbeddedRedis(
                    path, VAR_DIR / "redis", preexec_fn=die_with_parent
                )
                self.redis.start()
                print(f"Embedded Redis {embedded_redis.server_binary().name} on {path}")
            python = str(BIN / "python")
            subprocess.run(
                [python, "manage.py", "migrate", "--noinput"], env=env, check=True, cwd=BASE_DIR
            )
            self.spawn(
                "web",
                [
                    python,
                    "-m",
                    "crisp_site.serve",
                    "-b",
                    host,
                    "-p",
                    str(port),
                    "crisp_site.asgi:application",
                ],
                env,
            )
            self.spawn(
                "worker",
                [
                    str(BIN / "celery"),
                    "-A",
                    "crisp_site",
                    "worker",
                    "--loglevel",
                    "INFO",
                    "--concurrency",
                    "2",
                    "--hostname",
                    f"crisp-{os.getpid()}@%h",
                ],
                env,
            )
            self.spawn(
                "beat",
                [
                    str(BIN / "celery"),
                    "-A",
                    "crisp_site",
                    "beat",
                    "--loglevel",
                    "WARNING",  # not a line per sweep (every 2 s)
                    "--schedule",
                    str(VAR_DIR / "celerybeat-schedule"),
                ],
                env,
            )
            shown = "localhost" if host in {"127.0.0.1", "0.0.0.0"} else host  # noqa: S104
            url = f"http://{shown}:{port}/"
            health = self._wait_healthy(f"http://127.0.0.1:{port}/healthz")
            banner = "=" * 64
            print(
                f"\n{banner}\n  Crisp online is running at {url}\n"
                f"  health: {json.dumps(health)}\n  Stop with Ctrl-C.\n{banner}\n",
                flush=True,
            )
            while self.restart_dead():
                time.sleep(0.5)
            return 1
        except KeyboardInterrupt:
            print("\nStopping…", flush=True)
            return 0
        finally:
            self.stop()

    def _wait_healthy(self, url: str, timeout: float = 90) -> dict:
        deadline = time.monotonic() + timeout
        health: dict = {}
        while time.monotonic() < deadline:
            health = _health(url)
            if health.get("status") == "ok":
                return health
            for name, process in self.children:
                if process.poll() is not None:
                    raise SystemExit(f"{name} exited with status {process.returncode}")
            time.sleep(0.5)
        print(f"Warning: the site did not report healthy within {timeout:.0f}s: {health}")
        return health


def main() -> None:
    sys.exit(Supervisor().run())


if __name__ == "__main__":
    main()
