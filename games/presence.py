"""Who is connected to a table, shared by every daphne process through Redis.

One sorted set per game; each open socket is a member `"<seat>|<channel name>"` (`seat` is the
seat number, or `s` for a spectator) scored with the instant (ms) it expires. Sockets refresh
their member every `REFRESH_SECONDS`; a daphne process that dies without saying goodbye leaves
members that simply expire after `TTL_SECONDS`. Counting by seat (not by user) tells the table
what it needs — is seat 2 still there — without publishing anyone's user id.

Presence is advisory: a disconnected player keeps the seat; nothing in the game depends on it.
Losing it with a Redis restart costs nothing: every socket reconnects and registers again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from django.conf import settings
from redis import asyncio as aioredis
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

TTL_SECONDS = 30
REFRESH_SECONDS = 5
#: How long one presence call may take before it counts as Redis being unavailable.
CALL_TIMEOUT_SECONDS = 5.0

_clients: dict[asyncio.AbstractEventLoop, aioredis.Redis] = {}


def client() -> aioredis.Redis:
    """An asyncio Redis client for the running loop, with a *blocking* bounded pool.

    Per loop because asyncio connections belong to the loop that made them (tests run many
    loops); blocking because redis-py's default pool raises once 100 connections are busy.

    No ``socket_timeout``: with one, redis-py sends every command through
    ``asyncio.wait_for``, which on Python 3.11 *swallows a cancellation* that arrives as the
    send completes (CPython gh-86296, fixed in 3.12). A heartbeat cancelled at that instant
    kept beating: a ghost seat, and a socket whose close waited on it. The callers bound each
    call with ``asyncio.timeout`` instead (``CALL_TIMEOUT_SECONDS``), which counts
    cancellations correctly (tests/site/test_redis_cancel.py).
    """
    loop = asyncio.get_running_loop()
    found = _clients.get(loop)
    if found is None:
        for old in [k for k in _clients if k.is_closed()]:
            del _clients[old]
            _run_ids.pop(old, None)
        pool = aioredis.BlockingConnectionPool.from_url(
            settings.REDIS_URL, max_connections=50, timeout=10
        )
        found = _clients[loop] = aioredis.Redis(connection_pool=pool)
    return found


def _key(game_id: int) -> str:
    prefix = settings.CHANNEL_LAYERS["default"]["CONFIG"].get("prefix", "crisp")
    return f"{prefix}:presence:{game_id}"


def _member(seat: int | None, channel_name: str) -> str:
    return f"{'s' if seat is None else seat}|{channel_name}"


def _now_ms() -> int:
    return int(time.time() * 1000)


def _summary(pipe_result: list[bytes]) -> dict[str, Any]:
    seats: dict[str, int] = {}
    spectators = 0
    for raw in pipe_result:
        seat = raw.decode().split("|", 1)[0]
        if seat == "s":
            spectators += 1
        else:
            seats[seat] = seats.get(seat, 0) + 1
    return {"seats": seats, "spectators": spectators}


async def touch(game_id: int, seat: int | None, channel_name: str) -> tuple[dict[str, Any], bool]:
    """Register or refresh this socket; prune expired members.

    Returns the table's presence and whether it changed (a new member, or expired ones removed),
    so the caller broadcasts only real changes.
    """
    now = _now_ms()
    key = _key(game_id)
    async with asyncio.timeout(CALL_TIMEOUT_SECONDS), client().pipeline(transaction=True) as pipe:
        pipe.zremrangebyscore(key, "-inf", now)
        pipe.zadd(key, {_member(seat, channel_name): now + TTL_SECONDS * 1000})
        pipe.pexpire(key, TTL_SECONDS * 2000)
        pipe.zrange(key, 0, -1)
        pruned, added, _, members = await pipe.execute()
    return _summary(members), bool(pruned or added)


async def leave(game_id: int, seat: int | None, channel_name: str) -> dict[str, Any]:
    """Remove this socket; returns the table's presence afterwards."""
    key = _key(game_id)
    async with asyncio.timeout(CALL_TIMEOUT_SECONDS), client().pipeline(transaction=True) as pipe:
        pipe.zrem(key, _member(seat, channel_name))
        pipe.zremrangebyscore(key, "-inf", _now_ms())
        pipe.zrange(key, 0, -1)
        _, _, members = await pipe.execute()
    return _summary(members)


#: What "Redis is unavailable" looks like to a heartbeat: down, or too slow to give a pooled
#: connection within the pool's timeout (found at 2,000 sockets on one overloaded daphne).
UNAVAILABLE = (RedisError, OSError, TimeoutError)
REPORT_EVERY_SECONDS = 10.0
_reported = {"at": float("-inf"), "missed": 0}


def report_unavailable(game_id: int, exc: BaseException) -> None:
    """Log that presence is unavailable: one line (no traceback) per ``REPORT_EVERY_SECONDS``
    per process, with how many failures it stands for.

    Presence is advisory, and a Redis outage or an overloaded process fails every socket's
    heartbeat at once: 2,000 sockets gave 6,000 traceback lines in 45 s, burying what matters.
    """
    now = time.monotonic()
    if now - _reported["at"] < REPORT_EVERY_SECONDS:
        _reported["missed"] += 1
        return
    missed, _reported["missed"], _reported["at"] = _reported["missed"], 0, now
    logger.warning(
        "presence unavailable (game %s: %s: %s)%s",
        game_id,
        type(exc).__name__,
        exc,
        f"; {missed} more failures since the last report" if missed else "",
    )


_run_ids: dict[asyncio.AbstractEventLoop, tuple[float, str]] = {}


async def server_run_id() -> str:
    """The Redis server's run id: it changes when Redis restarts (groups may then be gone).

    Cached for a second per process and loop: a thousand sockets refreshing every few seconds
    need one `INFO` a second, not hundreds.
    """
    loop = asyncio.get_running_loop()
    cached = _run_ids.get(loop)
    if cached is not None and time.monotonic() - cached[0] < 1.0:
        return cached[1]
    async with asyncio.timeout(CALL_TIMEOUT_SECONDS):
        info = await client().info("server")
    run_id = str(info.get("run_id", ""))
    _run_ids[loop] = (time.monotonic(), run_id)
    return run_id
