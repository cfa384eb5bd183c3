"""`make run`'s supervisor: starts everything on the embedded default, and Ctrl-C leaves nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.processes import BASE_DIR, free_port, wait_until


def _descendants(pid: int) -> set[int]:
    """Every process whose ancestry leads to `pid` (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _healthz(port: int) -> dict:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        return json.load(error)


def _healthy(port: int) -> dict:
    """The first green ``/healthz`` body.  Its Celery check is a live ping answered within 1 s
    (crisp_site/health.py): on a busy machine one probe can miss it, as a load balancer's
    can, so the test polls as the banner did (a hang guard, not a speed goal)."""
    bodies: list[dict] = []
    wait_until(lambda: bodies.append(_healthz(port)) or bodies[-1]["status"] == "ok", 90, "health")
    return bodies[-1]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start_supervisor(tmp_path: Path, **extra: str) -> tuple[subprocess.Popen[bytes], int, Path]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        CRISP_VAR_DIR=str(tmp_path / "var"),
        PORT=str(port),
        DEBUG="1",
        DJANGO_SETTINGS_MODULE="crisp_site.settings",
        **extra,
    )
    log_path = tmp_path / "run.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "crisp_site.run"],
            cwd=BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    return process, port, log_path


def _redis_pid(supervisor: int) -> int:
    return next(
        pid
        for pid in _descendants(supervisor)
        if b"redis-server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    )


def _api(port: int, method: str, path: str, key: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Token {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - http://127.0.0.1
        return json.load(response)


def _make_tokens(tmp_path: Path, n: int) -> list[str]:
    """Users with API tokens in the supervised site's own database (its var/ SQLite)."""
    code = (
        "from accounts.models import User; from accounts.services import token_create\n"
        f"for i in range({n}):\n"
        "    u = User.objects.create_user(username=f'sup{i}', password='pw-not-secret-123')\n"
        "    print('KEY', token_create(user=u, name='t')[1])\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        CRISP_VAR_DIR=str(tmp_path / "var"), DEBUG="1", DJANGO_SETTINGS_MODULE="crisp_site.settings"
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [line.split()[1] for line in out.stdout.splitlines() if line.startswith("KEY ")]


async def _follow_until(port: int, game_id: int, key: str, version: int, timeout: float) -> int:
    """Like a real client: follow the game, reconnecting with ?version= after any close."""
    import asyncio

    from websockets.asyncio.client import connect

    seen = -1
    deadline = asyncio.get_running_loop().time() + timeout
    while seen < version:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"client stuck at version {seen}, wanted {version}")
        query = f"token={key}" + (f"&version={seen}" if seen >= 0 else "")
        try:
            async with connect(f"ws://127.0.0.1:{port}/ws/games/{game_id}/?{query}") as ws:
                while seen < version:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), 5))
                    seen = max(seen, frame.get("version", -1))
        except Exception:  # closed, refused, timed out: reconnect, as a real client does
            await asyncio.sleep(0.3)
    return seen


def _sweeps(log_path: Path) -> int:
    """How many sweeps the supervised worker has finished (its "Task games.sweep[…]
    succeeded" lines: logged because the test starts the supervisor with
    ``CRISP_QUIET_TASK_LINES`` empty)."""
    return sum(
        "Task games.sweep[" in line and "succeeded" in line
        for line in log_path.read_text().splitlines()
    )


@pytest.mark.live
@pytest.mark.skipif(not Path("/proc").exists(), reason="reads the process tree from /proc")
def test_supervisor_serves_a_healthy_site_restarts_what_dies_and_stops_everything(
    tmp_path: Path,
) -> None:
    """One supervisor (its start-up is most of the cost) for what two tests proved apart:

    - it serves a healthy site and says where (the banner, the URL, every part healthy);
    - a crashed worker is restarted and the site is healthy again;
    - a killed embedded Redis is restarted, the game survives, a deadline whose countdown task
      died with Redis is fired by the sweep, once (two more sweeps fire nothing), and a client
      catches up with every change made meanwhile;
    - a socket file left by a Redis that died without cleaning up does not block the start;
    - Ctrl-C under make (the terminal's SIGINT, make's forwarded SIGTERM, and more, 50 ms
      apart) stops everything once: exit status 0, no traceback, no orphans, no socket left.

    The stale socket and the repeated signals were a test of their own, which paid a whole
    supervisor start (migrations included) for them: 17 s of CI's run.
    """
    import asyncio
    import socket as sockets

    # A socket file left by a Redis that died without cleaning up (nobody listens on it).
    stale = tmp_path / "var" / "redis" / "redis.sock"
    stale.parent.mkdir(parents=True)
    with sockets.socket(sockets.AF_UNIX) as dead:
        dead.bind(str(stale))
    assert stale.exists()

    # A sweep every second, and the worker's task lines (the sweeps are counted in the log).
    process, port, log_path = _start_supervisor(
        tmp_path, CRISP_SWEEP_SECONDS="1", CRISP_QUIET_TASK_LINES=""
    )
    try:
        wait_until(lambda: "is running at" in log_path.read_text(), 600, "the banner")
        health = _healthy(port)
        assert health == {
            "status": "ok",
            "database": True,
            "redis": True,
            "celery": True,
            "celery_workers": health["celery_workers"],
        }
        assert f"http://localhost:{port}/" in log_path.read_text()
        children = _descendants(process.pid)
        assert len(children) >= 4  # redis-server, daphne, worker, beat (and worker's pool)

        # A crashed worker is restarted, and the site is healthy again.
        worker = next(
            pid
            for pid in children
            if b"worker" in Path(f"/proc/{pid}/cmdline").read_bytes()
            and Path(f"/proc/{pid}/stat").read_text().split()[3] == str(process.pid)
        )
        os.killpg(worker, signal.SIGKILL)
        wait_until(
            lambda: "worker exited with status" in log_path.read_text(),
            30,
            "the supervisor to notice the dead worker",
        )
        wait_until(lambda: _healthz(port).get("celery") is True, 90, "a restarted worker")
        assert process.poll() is None

        # A game under way when Redis dies.
        host, guest = _make_tokens(tmp_path, 2)
        game = _api(port, "POST", "/api/v1/games/", host, {"settings": {"target_score": 100}})
        _api(port, "POST", f"/api/v1/games/{game['id']}/join/", guest, {})
        _api(port, "POST", f"/api/v1/games/{game['id']}/start/", host)
        started = _api(port, "GET", f"/api/v1/games/{game['id']}/state/", host)["version"]

        def fired() -> list[str]:
            events = _api(port, "GET", f"/api/v1/games/{game['id']}/events/?since=0", host)[
                "events"
            ]
            return [e["type"] for e in events]

        # The opening look lasts 5 s; a very slow machine may already be past it here.
        pending = "draw_ready" not in fired()
        old_redis = _redis_pid(process.pid)
        os.kill(old_redis, signal.SIGKILL)  # the timers' countdown tasks die with it
        wait_until(
            lambda: "redis exited with status" in log_path.read_text(),
            30,
            "the supervisor to notice the dead Redis",
        )
        wait_until(lambda: _healthz(port).get("status") == "ok", 90, "a healthy site again")
        assert _redis_pid(process.pid) != old_redis

        # The opening look ends: its countdown task died with Redis, so the sweep fires it.
        wait_until(lambda: "draw_ready" in fired(), 60, "the overdue deadline")
        # Two more sweeps finished (the second begun after the first ended, so after the
        # deadline was seen fired): nothing fires twice.
        swept = _sweeps(log_path)
        wait_until(lambda: _sweeps(log_path) >= swept + 2, 60, "two more sweeps")
        types = fired()
        assert types.count("draw_ready") == 1, types
        if pending:
            assert "sweep fired 1 overdue deadline" in log_path.read_text()
        now = _api(port, "GET", f"/api/v1/games/{game['id']}/state/", host)["version"]
        assert now > started
        # A client catches up with every change made while Redis was away.
        assert asyncio.run(_follow_until(port, game["id"], guest, now, 60)) >= now
        assert process.poll() is None

        # Ctrl-C under make: the terminal's SIGINT and make's forwarded SIGTERM, and more.
        # Everything stops once, nothing is left behind.
        children = _descendants(process.pid)
        before_stop = len(log_path.read_text())  # Redis's death above may have logged tracebacks
        process.send_signal(signal.SIGINT)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGTERM):
            time.sleep(0.05)  # spacing, as make forwards its signal: not a wait for anything
            process.send_signal(sig)
        process.wait(60)
        wait_until(lambda: not any(_alive(pid) for pid in children), 60, "no orphans")
        assert process.returncode == 0, log_path.read_text()
        assert not stale.exists()
        assert "Traceback" not in log_path.read_text()[before_stop:]
    finally:
        children = _descendants(process.pid)
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            process.wait(60)
        wait_until(lambda: not any(_alive(pid) for pid in children), 60, "no orphans")
        print(log_path.read_text())
