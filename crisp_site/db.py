"""Database calls from async code on a bounded pool of threads, not Channels' single one.

Channels' `database_sync_to_async` is thread-sensitive: every call of a daphne process, from every
socket, runs on one thread, one after the other. Measured under load that thread was the busiest
of the process, two thirds of its time waiting on PostgreSQL round trips of *other* tables' moves
while the CPU idled. Each of our consumer's database calls is self-contained (it opens, commits
and hands back its connection within the call; the service layer's row locks or SQLite's
IMMEDIATE transactions serialise writers to one game), so they may run side by side.

`parallel_database_sync_to_async` runs them on `DB_THREADS` threads per process (default: the
PostgreSQL pool's `max_size`, so a thread never waits for a connection the pool cannot give).

What a call costs beyond its function (session 19, `bench/dbcall_cpu.py`): asgiref's
`SyncToAsync` hand-over (a context copy re-homed onto both threads, a shielded future chained to
the executor's, thread-locals for `async_to_sync`) and, with the PostgreSQL pool and
`CONN_MAX_AGE=0`, a connection borrowed and given back per call (the pool's `getconn`, Django's
`connect()`, the pool's `putconn`). So here:

* **A lighter hand-over** (`DatabaseCall`): the function runs on a pool thread in a copy of the
  caller's context (context variables are seen, as with asgiref; changes made in the call are not
  copied back: these calls return what they produce). An exception reaches the awaiting task as
  it was raised. A cancelled awaiting task gets `CancelledError` at once, as with asgiref; a call
  already running finishes on its thread and its connection is looked after there as usual; a
  call not yet started is dropped.
* **Each database thread keeps its connection between calls** (`keep_connections`): SQLite's
  always (opening one cost more than a socket's connect's queries, bench/watchers.py); a
  PostgreSQL one taken from the pool by at most `DB_THREAD_CONNECTIONS` threads (default: half
  the pool's `max_size`), so the pool still serves the rest of the process (REST requests, the
  live thread) with the other half. Kept with Django's own rules still applied after each call
  (`close_old_connections`: a connection left outside autocommit, or that saw an error and no
  longer answers, is closed) and ours: one left inside a transaction is given back (the pool
  rolls it back), one kept longer than `KEEP_SECONDS` is given back (the pool's own lifetime
  rules then apply), and before each call one whose socket has something to read while idle
  (its backend ended: a PostgreSQL restart, `pg_terminate_backend`) is closed and a fresh one
  borrowed, so the call does not fail on it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import functools
import logging
import os
import queue
import select
import threading
import time
from collections.abc import Callable
from typing import Any

from asgiref.sync import SyncToAsync
from django.conf import settings
from django.db import connections

_lock = threading.Lock()
_executor: DatabaseThreads | None = None
logger = logging.getLogger(__name__)

#: The longest a database thread keeps one PostgreSQL connection before giving it back to the
#: pool (which then applies its own `max_lifetime`); it borrows another on its next call.
KEEP_SECONDS = 60.0

#: Threads (idents) that keep a pooled PostgreSQL connection now: at most `thread_connections()`.
_keeping: set[int] = set()
#: Their connections (thread ident -> Django connection wrapper), for `release_connections`.
_kept: dict[int, Any] = {}
_local = threading.local()
_pid = os.getpid()
#: psycopg's idle transaction status (no transaction open): the only one a kept connection has.
_IDLE = 0


def db_threads() -> int:
    """How many database calls one process runs at once (bounded by its connections)."""
    configured = getattr(settings, "DB_THREADS", None)
    if configured:
        return int(configured)
    pool = _pool_options()
    if pool.get("max_size"):
        return int(pool["max_size"])
    return 4


def thread_connections() -> int:
    """How many database threads may keep a pooled PostgreSQL connection between calls."""
    configured = getattr(settings, "DB_THREAD_CONNECTIONS", None)
    if configured is not None and int(configured) >= 0:
        return min(int(configured), db_threads())
    return min(int(_pool_options().get("max_size") or 0) // 2, db_threads())


def _pool_options() -> dict[str, Any]:
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    return pool if isinstance(pool, dict) else {}


def _forget_executor() -> None:
    """In a forked child: its own threads (the parent's are not there), nothing kept."""
    global _executor, _lock, _pid
    _pid = os.getpid()
    _executor = None
    _lock = threading.Lock()
    _keeping.clear()
    _kept.clear()


os.register_at_fork(after_in_child=_forget_executor)


class DatabaseThreads:
    """At most `size` threads, made as calls need them; a call goes to an idle thread that
    keeps a connection first, the one idle most recently first (so the threads that keep
    connections are the ones that work, and the others go unused), else to a new thread,
    else waits its turn.

    Why not `ThreadPoolExecutor`: an idle thread there tells the pool it is idle only after the
    call's result has woken the caller, so a socket's next call often found none idle and
    started another thread, and its idle threads take calls in turn: with a connection kept by
    half of them, half the calls borrowed one from the pool again.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle_keeping: list[queue.SimpleQueue[Any]] = []
        self._idle_other: list[queue.SimpleQueue[Any]] = []
        self._backlog: collections.deque[Callable[[], Any]] = collections.deque()

    def submit(self, job: Callable[[], Callable[[], None] | None]) -> None:
        """Run `job` on a thread; what it returns (if anything) is called once the thread has
        said it is idle again (the call's outcome, handed to the caller)."""
        with self._lock:
            if self._idle_keeping:
                slot = self._idle_keeping.pop()
            elif self._idle_other:
                slot = self._idle_other.pop()
            elif len(self._threads) < self.size:
                thread = threading.Thread(
                    target=self._work,
                    args=(job,),
                    name=f"crisp-db_{len(self._threads)}",
                    daemon=True,
                )
                self._threads.append(thread)
                thread.start()
                return
            else:
                self._backlog.append(job)
                return
        slot.put(job)

    def _work(self, job: Callable[[], Callable[[], None] | None] | None) -> None:
        slot: queue.SimpleQueue[Any] = queue.SimpleQueue()
        ident = threading.get_ident()
        while True:
            assert job is not None
            try:
                outcome = job()
            except BaseException:  # a job hands its own errors on; this is a bug
                logger.exception("database thread job failed")
                outcome = None
            with self._lock:
                if self._backlog:
                    job = self._backlog.popleft()
                else:
                    job = None
                    idle = self._idle_keeping if ident in _keeping else self._idle_other
                    idle.append(slot)
            if outcome is not None:
                outcome()
            if job is None:
                job = slot.get()


def executor() -> DatabaseThreads:
    """This process's database threads (made on first use; a forked child makes its own)."""
    global _executor
    found = _executor
    if found is not None:
        return found
    with _lock:
        if _executor is None:
            _executor = DatabaseThreads(db_threads())
        return _executor


# --- The connection a database thread keeps ---------------------------------------------------


def keep_connections() -> None:
    """After a call (on a database thread): close what must be closed, keep the rest.

    Django's rules (`close_old_connections`, with the age rule lifted for what this thread
    keeps), then ours for PostgreSQL (module docstring).
    """
    ident = threading.get_ident()
    keeps = False
    for conn in connections.all(initialized_only=True):
        raw = conn.connection
        if raw is None:
            continue
        if conn.vendor == "sqlite":
            conn.close_at = None
        elif conn.vendor == "postgresql" and getattr(raw, "_pool", None) is not None:
            # Pooled (CONN_MAX_AGE=0): kept by this thread, or given back now.
            mine = _may_keep(conn, raw, ident)
            conn.close_at = None if mine else 0.0
            keeps = keeps or mine
        # Django's other rules still apply: what `close_old_connections` does, connection by
        # connection (one that saw an error and no longer answers, one left outside
        # autocommit, one past its age).
        conn.close_if_unusable_or_obsolete()
        if conn.connection is None and conn.vendor == "postgresql":
            keeps = False
    if not keeps and ident in _keeping:
        _let_go(ident)


def _may_keep(conn: Any, raw: Any, ident: int) -> bool:
    """Whether this thread may keep this pooled PostgreSQL connection after the call."""
    if raw._pool.closed or raw.info.transaction_status != _IDLE:
        return False
    if ident in _keeping:
        return _kept.get(ident) is conn and time.monotonic() < _local.until
    with _lock:
        if len(_keeping) >= thread_connections():
            return False
        _keeping.add(ident)
        _kept[ident] = conn
    _local.until = time.monotonic() + KEEP_SECONDS
    return True


def _let_go(ident: int) -> None:
    with _lock:
        _keeping.discard(ident)
        _kept.pop(ident, None)


def check_kept_connection() -> None:
    """Before a call (on a database thread): close the kept PostgreSQL connection if its
    backend is gone (an idle connection has nothing to read unless the server ended it), or its
    pool was closed, so the call borrows a working one instead of failing on it."""
    ident = threading.get_ident()
    conn = _kept.get(ident)
    if conn is None:
        return
    raw = conn.connection
    if raw is not None and not _gone(raw):
        return
    try:
        if raw is not None:
            raw.close()  # the pool discards a closed connection and opens another
    finally:
        conn.close()
        _let_go(ident)


def _gone(raw: Any) -> bool:
    pool = getattr(raw, "_pool", None)
    if raw.closed or pool is None or pool.closed:
        return True
    try:
        poll = select.poll()
        poll.register(raw.pgconn.socket, select.POLLIN)
        return bool(poll.poll(0))
    except Exception:
        return True


def release_connections() -> None:
    """Close every connection the database threads keep (a test database about to be dropped,
    or a process shutting down). Only while no database call runs: each thread notices its
    connection closed at its next call and borrows another."""
    with _lock:
        kept = list(_kept.values())
    for conn in kept:
        raw = conn.connection
        if raw is not None:
            raw.close()


# --- The hand-over ------------------------------------------------------------------------------


def _deliver(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the awaiting task was cancelled meanwhile
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


def _run(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
    context: contextvars.Context,
    func: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Callable[[], None] | None:
    """On a database thread: the call, between the connection's checks; returns the hand-back
    of its outcome to the loop (run once the thread is idle again)."""
    if future.cancelled():  # the awaiting task went before the call started
        return None
    # As asgiref's thread_handler: `async_to_sync` inside the call runs on the caller's loop.
    SyncToAsync.threadlocal.main_event_loop = loop
    SyncToAsync.threadlocal.main_event_loop_pid = _pid
    result, error = None, None
    try:
        result = context.run(_call, func, args, kwargs)
    except StopIteration as stop:  # a future cannot carry it (as a coroutine's: RuntimeError)
        error = RuntimeError("database call raised StopIteration")
        error.__cause__ = stop
    except BaseException as raised:  # handed to the awaiting task as it was raised
        error = raised
    return functools.partial(_hand_back, loop, future, result, error)


def _hand_back(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
    result: Any,
    error: BaseException | None,
) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody awaits it any more
        loop.call_soon_threadsafe(_deliver, future, result, error)


def _call(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    check_kept_connection()
    try:
        return func(*args, **kwargs)
    finally:
        keep_connections()


class DatabaseCall:
    """`func` as an awaitable that runs it on the database threads (the module's docstring)."""

    __slots__ = ("func",)

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        executor().submit(
            functools.partial(
                _run, loop, future, contextvars.copy_context(), self.func, args, kwargs
            )
        )
        return await future


def parallel_database_sync_to_async(func: Callable[..., Any]) -> DatabaseCall:
    """`database_sync_to_async(func)`, run on the process's bounded database thread pool."""
    return DatabaseCall(func)
