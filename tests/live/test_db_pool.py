"""Database connections stay bounded under a flood, on a real daphne and Celery on PostgreSQL.

Under ASGI every request runs in a thread of its own; with persistent connections (the old
`CONN_MAX_AGE=60` advice) each kept its connection, and 300 concurrent requests opened 100
PostgreSQL backends until the rest failed with "too many clients" (HTTP 500). The psycopg pool
(`DB_POOL_MAX_SIZE` per process) bounds them; requests past it wait for a connection instead.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from django.db import connection

from accounts import services as account_services
from tests import processes as live

from .conftest import make_game, make_user

pytestmark = [pytest.mark.live, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

REQUESTS = 300
POOL_MAX = 4


def _require_postgres() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the connection pool is PostgreSQL's (psycopg_pool)")


def _admin_dsn() -> str:
    """A DSN for watching the server from outside Django (its own connection, not pooled)."""
    db = connection.settings_dict
    return (
        f"host={db.get('HOST') or '127.0.0.1'} port={db.get('PORT') or 5432} "
        f"user={db.get('USER') or 'postgres'} dbname={db['NAME']}"
        + (f" password={db['PASSWORD']}" if db.get("PASSWORD") else "")
    )


class BackendWatcher:
    """Samples how many backends a given `application_name` holds, every 10 ms, in a thread."""

    def __init__(self, application_name: str) -> None:
        self.application_name = application_name
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with psycopg.connect(_admin_dsn(), autocommit=True) as conn:
            while not self._stop.is_set():
                (count,) = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                    [self.application_name],
                ).fetchone()
                self.peak = max(self.peak, count)
                time.sleep(0.01)

    def __enter__(self) -> BackendWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def sessions_opened() -> int:
    """Backends ever started on the test database (PostgreSQL ≥ 14 counts them)."""
    with psycopg.connect(_admin_dsn(), autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        (count,) = conn.execute(
            "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return int(count)


def _get(port: int, path: str, key: str) -> tuple[int, bytes]:
    for attempt in range(3):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            conn.request("GET", path, headers={"Authorization": f"Token {key}"})
            response = conn.getresponse()
            return response.status, response.read()
        except (ConnectionResetError, ConnectionRefusedError):
            # The listen backlog overflowed: the kernel's refusal, not the site's answer.
            if attempt == 2:
                raise
            time.sleep(0.2)
        finally:
            conn.close()
    raise AssertionError("unreachable")


async def _open_sockets(port: int, game_id: int, key: str, n: int) -> list[Any]:
    """n sockets on the game, each past its first database calls (auth, seat, snapshot)."""
    from websockets.asyncio.client import connect

    sockets = [
        await connect(f"ws://127.0.0.1:{port}/ws/games/{game_id}/?token={key}") for _ in range(n)
    ]
    for socket in sockets:
        while json.loads(await socket.recv())["type"] != "snapshot":
            pass
    return sockets


def test_a_flood_of_requests_never_fails_for_want_of_a_connection(log_dir: Any) -> None:
    """With sockets busy on the same daphne: their database threads hold no connection."""
    _require_postgres()
    user = make_user()
    _token, key = account_services.token_create(user=user, name="flood")
    game = make_game([user, make_user()], start=False)
    port = live.free_port()
    app_name = f"crisp-flood-{port}"
    url = live.database_url() + f"?application_name={app_name}"
    web = live.daphne(
        log_dir, port, DATABASE_URL=url, DB_POOL_MAX_SIZE=str(POOL_MAX), DB_POOL_MIN_SIZE="1"
    )
    with live.running(web):
        live.wait_until(lambda: live.port_open(port), 60, "daphne to listen")
        assert _get(port, "/api/v1/games/", key)[0] == 200
        loop = asyncio.new_event_loop()
        sockets = loop.run_until_complete(_open_sockets(port, game.pk, key, 2 * POOL_MAX))
        start = threading.Barrier(REQUESTS)

        def one(_: int) -> int:
            start.wait()
            return _get(port, "/api/v1/games/", key)[0]

        with BackendWatcher(app_name) as watcher, ThreadPoolExecutor(REQUESTS) as pool:
            statuses = list(pool.map(one, range(REQUESTS)))
        for socket in sockets:
            loop.run_until_complete(socket.close())
        loop.close()
        assert statuses.count(200) == REQUESTS, sorted(set(statuses))
        assert 1 <= watcher.peak <= POOL_MAX, watcher.peak
        assert "too many clients" not in web.log()


def _worker(log_dir: Any, pool: str, **env: str) -> live.LiveProcess:
    """A Celery worker with this execution pool (`make run` uses prefork, the tests threads)."""
    worker = live.celery_worker(log_dir, name=f"w-{pool}", **env)
    at = worker.args.index("--pool")
    worker.args[at + 1] = pool
    return worker


@pytest.mark.parametrize("pool", ["prefork", "threads"])
def test_a_celery_worker_reuses_its_connections(log_dir: Any, pool: str) -> None:
    """Forty tasks that each query the database open a handful of backends, not forty.

    (Celery's Django fixup used to close the connection, and in a prefork child the whole
    connection pool, around every task.)
    """
    _require_postgres()
    from games.tasks import sweep

    tasks = 40
    with live.running(_worker(log_dir, pool, DB_POOL_MIN_SIZE="1")) as (worker,):
        live.wait_until(lambda: "ready." in worker.log(), 60, "the worker to be ready")
        sweep.delay()
        live.wait_until(lambda: worker.log().count("succeeded") >= 1, 60, "a first sweep")
        before = sessions_opened()
        for _ in range(tasks):
            sweep.delay()
        live.wait_until(
            lambda: worker.log().count("succeeded") >= tasks + 1, 120, "the sweeps to run"
        )
        opened = sessions_opened() - before
    # One is the second probe's own session; the tasks may open at most the pool's few more.
    assert opened <= 1 + 2 * 2, opened
