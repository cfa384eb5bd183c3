"""Database calls from async code on a bounded pool of threads, not Channels' single one.

Channels' `database_sync_to_async` is thread-sensitive: every call of a daphne process, from every
socket, runs on one thread, one after the other. Measured under load that thread was the busiest
of the process, two thirds of its time waiting on PostgreSQL round trips of *other* tables' moves
while the CPU idled. Each of our consumer's database calls is self-contained (it opens, commits
and hands back its connection within the call; the service layer's row locks or SQLite's
IMMEDIATE transactions serialise writers to one game), so they may run side by side.

`parallel_database_sync_to_async` runs them on `DB_THREADS` threads per process (default: the
PostgreSQL pool's `max_size`, so a thread never waits for a connection the pool cannot give),
still closing obsolete connections around each call as Channels does — except that on SQLite
each of these threads keeps its one connection open (`keep_sqlite_connections`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import SyncToAsync
from channels.db import DatabaseSyncToAsync
from django.conf import settings
from django.db import close_old_connections, connections

_lock = threading.Lock()
_executor: tuple[int, ThreadPoolExecutor] | None = None


def db_threads() -> int:
    """How many database calls one process runs at once (bounded by its connections)."""
    configured = getattr(settings, "DB_THREADS", None)
    if configured:
        return int(configured)
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    if isinstance(pool, dict) and pool.get("max_size"):
        return int(pool["max_size"])
    return 4


def executor() -> ThreadPoolExecutor:
    """This process's database thread pool (made on first use; a forked child makes its own)."""
    global _executor
    with _lock:
        if _executor is None or _executor[0] != os.getpid():
            _executor = (
                os.getpid(),
                ThreadPoolExecutor(max_workers=db_threads(), thread_name_prefix="crisp-db"),
            )
        return _executor[1]


def keep_sqlite_connections() -> None:
    """Keep this thread's SQLite connection for its next call (called on a pool thread only).

    Opening a SQLite connection (a file open and the WAL pragmas) cost more than the queries of
    a socket's connect: 500 watchers arriving on one daphne spent 38 % of its database threads'
    time in `get_new_connection` (bench/watchers.py), and handshakes timed out behind it. The
    reason for never keeping connections under ASGI (a thread per request, each leaving one
    open) does not hold here: these threads are `DB_THREADS` for the process's life, so at
    most that many stay open. A broken connection, or one left outside autocommit, is still
    closed by `close_old_connections`. PostgreSQL keeps its pool (`CONN_MAX_AGE=0`).
    """
    for conn in connections.all(initialized_only=True):
        if conn.vendor == "sqlite" and conn.connection is not None:
            conn.close_at = None


class PoolDatabaseSyncToAsync(DatabaseSyncToAsync):
    """Channels' `DatabaseSyncToAsync`, keeping a pool thread's SQLite connection."""

    def thread_handler(self, loop: Any, *args: Any, **kwargs: Any) -> Any:
        close_old_connections()
        try:
            return SyncToAsync.thread_handler(self, loop, *args, **kwargs)
        finally:
            keep_sqlite_connections()
            close_old_connections()


def parallel_database_sync_to_async(func: Callable[..., Any]) -> DatabaseSyncToAsync:
    """`database_sync_to_async(func)`, run on the process's bounded database thread pool."""
    return PoolDatabaseSyncToAsync(func, thread_sensitive=False, executor=executor())
