"""The database threads' calls (crisp_site/db.py): the hand-over's guarantees, and the
connection each thread keeps between calls -- bounded, and never kept broken, inside a
transaction, or past its backend's end."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any

import psycopg
import pytest
from django.db import connection, connections
from django.db.backends.signals import connection_created

from crisp_site import db

pytestmark = pytest.mark.django_db(transaction=True)

_seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


def _require_postgres() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the pooled connection a thread keeps is PostgreSQL's")


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _admin() -> psycopg.Connection[Any]:
    """A connection of the test's own, outside Django and its pool."""
    s = connections["default"].settings_dict
    return psycopg.connect(
        host=s.get("HOST") or "127.0.0.1",
        port=s.get("PORT") or 5432,
        user=s.get("USER") or "postgres",
        password=s.get("PASSWORD") or None,
        dbname=s["NAME"],
        autocommit=True,
    )


async def test_the_caller_s_exception_arrives_as_raised(transactional_db: None) -> None:
    class Refusal(Exception):
        pass

    def refuse(code: str) -> None:
        raise Refusal(code)

    with pytest.raises(Refusal, match="nope") as raised:
        await db.parallel_database_sync_to_async(refuse)("nope")
    assert raised.value.__traceback__ is not None


async def test_the_call_sees_the_caller_s_context_variables(transactional_db: None) -> None:
    _seen.set("the socket's")
    got = await db.parallel_database_sync_to_async(_seen.get)()
    assert got == "the socket's"
    assert threading.current_thread() is threading.main_thread()


async def test_a_cancelled_caller_leaves_the_call_to_finish_and_its_connection_clean(
    transactional_db: None,
) -> None:
    """The awaiting task goes at once; the call already running finishes its transaction on
    its thread, and the connection it leaves is as good as any (not inside a transaction)."""
    from django.db import transaction

    from games.models import Game

    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow() -> int:
        with transaction.atomic():
            count = Game.objects.count()
            started.set()
            release.wait(10)
        finished.set()
        return count

    task = asyncio.ensure_future(db.parallel_database_sync_to_async(slow)())
    await asyncio.get_running_loop().run_in_executor(None, started.wait, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not finished.is_set()
    release.set()
    await asyncio.get_running_loop().run_in_executor(None, finished.wait, 10)

    def state() -> tuple[bool, bool]:
        return connection.in_atomic_block, connection.get_autocommit()

    for _ in range(2 * db.db_threads()):  # whichever thread it ran on
        assert await db.parallel_database_sync_to_async(state)() == (False, True)
    for kept in list(db._kept.values()):
        assert kept.connection is None or kept.connection.info.transaction_status == 0


async def test_a_thread_keeps_its_postgresql_connection(transactional_db: None) -> None:
    """Main borrowed from the pool and gave it back on every call: Django's connect() (and the
    pool's getconn/putconn) per call, a `connection_created` each time."""
    _require_postgres()
    opened: list[int] = []

    def count(sender: Any, connection: Any, **kwargs: Any) -> None:
        opened.append(1)

    connection_created.connect(count)
    try:
        pids = [
            await db.parallel_database_sync_to_async(_backend_pid)()
            for _ in range(3 * db.db_threads())
        ]
    finally:
        connection_created.disconnect(count)
    assert len(opened) <= db.thread_connections(), (len(opened), db.thread_connections())
    assert len(set(pids)) <= db.thread_connections()


async def test_the_threads_keep_at_most_their_share_and_the_pool_serves_the_rest(
    transactional_db: None,
) -> None:
    _require_postgres()
    n = db.db_threads()
    barrier = threading.Barrier(n, timeout=10)

    def hold() -> int:
        pid = _backend_pid()
        barrier.wait()  # all n threads hold a connection at once
        return pid

    pids = await asyncio.gather(*(db.parallel_database_sync_to_async(hold)() for _ in range(n)))
    assert len(set(pids)) == n
    assert 1 <= len(db._kept) <= db.thread_connections() < n
    pool = connection.pool
    borrowed = [pool.getconn(timeout=5) for _ in range(pool.max_size - len(db._kept))]
    for raw in borrowed:
        pool.putconn(raw)


async def test_a_connection_left_inside_a_transaction_is_not_kept(
    transactional_db: None,
) -> None:
    _require_postgres()

    def begin() -> int:
        with connection.cursor() as cursor:
            cursor.execute("BEGIN")  # behind Django's back: autocommit as far as it knows
        return int(connection.connection.info.transaction_status)

    def status_at_start() -> int:
        connection.ensure_connection()
        return int(connection.connection.info.transaction_status)

    for _ in range(2 * db.db_threads()):
        assert await db.parallel_database_sync_to_async(begin)() != 0
        assert await db.parallel_database_sync_to_async(status_at_start)() == 0


async def test_a_kept_connection_whose_backend_ended_is_replaced_before_the_call(
    transactional_db: None,
) -> None:
    """A PostgreSQL restart (here: its backend terminated) must not fail the next call."""
    _require_postgres()
    call = db.parallel_database_sync_to_async(_backend_pid)
    pid = await call()
    kept = {id(conn): conn for conn in db._kept.values()}
    assert kept, "the thread keeps its connection"
    with _admin() as admin:
        for conn in kept.values():
            raw = conn.connection
            admin.execute("SELECT pg_terminate_backend(%s)", [raw.info.backend_pid])
        # Until every terminated backend has told its client (the socket turns readable).
        for conn in kept.values():
            while not db._gone(conn.connection):
                await asyncio.sleep(0.01)
    for _ in range(2 * db.db_threads()):
        assert await call() != pid


async def test_released_connections_are_replaced_at_the_next_call(
    transactional_db: None,
) -> None:
    """What the test session does before dropping its database (tests/conftest.py)."""
    _require_postgres()
    call = db.parallel_database_sync_to_async(_backend_pid)
    pid = await call()
    db.release_connections()
    with _admin() as admin:
        while admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid]
        ).fetchone()[0]:
            await asyncio.sleep(0.01)
    assert await call() != pid
