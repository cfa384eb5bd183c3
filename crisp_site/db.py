"""Database calls from async code on a bounded pool of threads, not Channels' single one.

Channels' `database_sync_to_async` is thread-sensitive: every call of a daphne process, from every
socket, runs on one thread, one after the other. Measured under load that thread was the busiest
of the process, two thirds of its time waiting on PostgreSQL round trips of *other* tables' moves
while the CPU idled. Each of our consumer's database calls is self-contained (it opens, commits
and hands back its connection within the call; the service layer's row locks or SQLite's
IMMEDIATE transactions serialise writers to one game), so they may run side by side.

`parallel_database_sync_to_async` runs them on `DB_THREADS` threads per process (default: the
PostgreSQL pool's `max_size`, so a thread never waits for a connection the pool cannot give),
still closing obsolete connections around each call as Channels does.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from channels.db import DatabaseSyncToAsync
from django.conf import settings

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


def parallel_database_sync_to_async(func: Callable[..., Any]) -> DatabaseSyncToAsync:
    """`database_sync_to_async(func)`, run on the process's bounded database thread pool."""
    return DatabaseSyncToAsync(func, thread_sensitive=False, executor=executor())
