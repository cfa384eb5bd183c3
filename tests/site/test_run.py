"""`make run`'s supervisor: starts everything on the embedded default, and Ctrl-C leaves nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
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
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        return json.load(error)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.live
@pytest.mark.skipif(not Path("/proc").exists(), reason="reads the process tree from /proc")
def test_supervisor_serves_a_healthy_site_and_stops_everything(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(CRISP_VAR_DIR=str(tmp_path / "var"), PORT=str(port), DEBUG="1",
               DJANGO_SETTINGS_MODULE="crisp_site.settings")
    log = (tmp_path / "run.log").open("w+")
    process = subprocess.Popen([sys.executable, "-m", "crisp_site.run"], cwd=BASE_DIR, env=env,
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: "is running at" in (tmp_path / "run.log").read_text(), 120,
                   "the supervisor's banner")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz") as response:
            health = json.load(response)
        assert health == {"status": "ok", "database": True, "redis": True, "celery": True,
                          "celery_workers": health["celery_workers"]}
        assert f"http://localhost:{port}/" in (tmp_path / "run.log").read_text()
        children = _descendants(process.pid)
        assert len(children) >= 4  # redis-server, daphne, worker, beat (and worker's pool)

        # A crashed worker is restarted, and the site is healthy again.
        worker = next(pid for pid in children
                      if b"worker" in Path(f"/proc/{pid}/cmdline").read_bytes()
                      and Path(f"/proc/{pid}/stat").read_text().split()[3] == str(process.pid))
        os.killpg(worker, signal.SIGKILL)
        wait_until(lambda: "worker exited with status" in (tmp_path / "run.log").read_text(), 30,
                   "the supervisor to notice the dead worker")
        wait_until(lambda: _healthz(port).get("celery") is True, 90, "a restarted worker")
        assert process.poll() is None
        children = _descendants(process.pid)

        process.send_signal(signal.SIGINT)
        process.wait(60)
        wait_until(lambda: not any(_alive(pid) for pid in children), 10, "no orphans")
        assert process.returncode == 0
        assert not (tmp_path / "var" / "redis" / "redis.sock").exists()
    finally:
        if process.poll() is None:
            process.kill()
        log.seek(0)
        print(log.read())
        log.close()
