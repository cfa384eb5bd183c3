"""Who is connected to a table, shared by every daphne process through Redis.

Two sorted sets per game, scored with the instant (ms) each member expires: the seats'
sockets (`"<seat>|<channel name>"`) and the spectators' sockets (`<channel name>`). Sockets
refresh their member every `REFRESH_SECONDS`; a daphne process that dies without saying goodbye
leaves members that simply expire after `TTL_SECONDS`. Counting by seat (not by user) tells the
table what it needs — is seat 2 still there — without publishing anyone's user id.

What a change costs the *other* sockets is bounded, whatever the crowd (issue 21: 500 watchers
on one table made every join and leave a frame to every socket, 250,000 frames for a full
house, and handshakes timed out behind them):

* a seat's socket coming or going is announced at once (`presence`: at most a few sockets per
  seat, and a table has at most 8 seats);
* a spectator's is not announced by itself: the spectator count goes out as one coalesced
  `spectators` frame at most every `SPECTATORS_EVERY_SECONDS` per game (`request_count`), so a
  crowd arriving or leaving costs each socket one frame per period, not one per socket;
* a connecting socket gets the table's presence for itself (not broadcast).

Presence is advisory: a disconnected player keeps the seat; nothing in the game depends on it.
Losing it with a Redis restart costs nothing: every socket reconnects and registers again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
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
            _touches.pop(old, None)
        pool = aioredis.BlockingConnectionPool.from_url(
            settings.REDIS_URL, max_connections=50, timeout=10
        )
        found = _clients[loop] = aioredis.Redis(connection_pool=pool)
    return found


def _key(game_id: int) -> str:
    """The seats' sorted set (games.tasks reads it: is any player connected)."""
    prefix = settings.CHANNEL_LAYERS["default"]["CONFIG"].get("prefix", "crisp")
    return f"{prefix}:presence:{game_id}"


def _spectators_key(game_id: int) -> str:
    return f"{_key(game_id)}:spectators"


def _due_key(game_id: int) -> str:
    """Set (NX) while a coalesced spectator count of the game is on its way."""
    return f"{_key(game_id)}:count-due"


def _member(seat: int, channel_name: str) -> str:
    return f"{seat}|{channel_name}"


def _now_ms() -> int:
    return int(time.time() * 1000)


def _seats(members: list[bytes]) -> dict[str, int]:
    seats: dict[str, int] = {}
    for raw in members:
        seat = raw.decode().split("|", 1)[0]
        seats[seat] = seats.get(seat, 0) + 1
    return seats


@dataclass(frozen=True)
class Change:
    """The table's presence after a touch or a leave, and what of it changed.

    `seats_changed` asks for a `presence` frame to every socket; `spectators_changed` for a
    coalesced count (`request_count`). Reading the seats costs O(seat sockets) and the count
    O(log spectators): a heartbeat no longer reads every spectator's member.
    """

    seats: dict[str, int]
    spectators: int
    seats_changed: bool
    spectators_changed: bool

    def summary(self) -> dict[str, Any]:
        """The `presence` frame's fields (docs/PROTOCOL.md)."""
        return {"seats": self.seats, "spectators": self.spectators}


async def touch(
    game_id: int, seat: int | None, channel_name: str, person: str | None = None
) -> Change:
    """Register or refresh this socket; prune expired members of both sets.

    Says what changed (a new member, or expired ones removed), so the caller announces only
    real changes, each in its own way.  ``person`` (``person_of``) is also counted as online
    site-wide (``online_count``) until the socket's member would expire.

    Every touch of one loop iteration goes to Redis in one ``MULTI``/``EXEC`` (``_Touches``):
    the heartbeats of a process's sockets wake together (``next_beat_in``), so a tick costs
    one round trip, not one per socket (bench/RESULTS.md, session 15). A touch cancelled
    before its batch is sent is left out of it; one cancelled while its batch is in flight
    waits for the batch (bounded), so a closed socket's ``leave`` never runs before its last
    refresh lands.
    """
    touches = _touches.get(asyncio.get_running_loop())
    if touches is None:
        touches = _touches[asyncio.get_running_loop()] = _Touches()
    return await touches.touch(game_id, seat, channel_name, person)


def _touch_commands(
    pipe: Any, now: int, game_id: int, seat: int | None, channel_name: str, person: str | None
) -> int:
    """Queue one socket's refresh on ``pipe``; how many replies it will have."""
    seats_key, spectators_key = _key(game_id), _spectators_key(game_id)
    if person is not None:
        pipe.zadd(_online_key(), {person: now + TTL_SECONDS * 1000}, gt=True)
    pipe.zremrangebyscore(seats_key, "-inf", now)
    pipe.zremrangebyscore(spectators_key, "-inf", now)
    if seat is None:
        pipe.zadd(spectators_key, {channel_name: now + TTL_SECONDS * 1000})
        pipe.pexpire(spectators_key, TTL_SECONDS * 2000)
    else:
        pipe.zadd(seats_key, {_member(seat, channel_name): now + TTL_SECONDS * 1000})
        pipe.pexpire(seats_key, TTL_SECONDS * 2000)
    pipe.zrange(seats_key, 0, -1)
    pipe.zcard(spectators_key)
    return 7 if person is not None else 6


def _touch_change(seat: int | None, results: list[Any]) -> Change:
    seats_pruned, spectators_pruned, added, _, members, count = results[-6:]
    return Change(
        seats=_seats(members),
        spectators=int(count),
        seats_changed=bool(seats_pruned or (added and seat is not None)),
        spectators_changed=bool(spectators_pruned or (added and seat is None)),
    )


class _Touches:
    """One loop's touches waiting for the next send: all of them in one transaction."""

    def __init__(self) -> None:
        self.waiting: list[tuple[tuple[Any, ...], asyncio.Future[Change]]] = []
        self.sending: set[asyncio.Task[None]] = set()  # held: the loop keeps weak references

    def _start_send(self) -> None:
        task = asyncio.ensure_future(self._send())
        self.sending.add(task)
        task.add_done_callback(self.sending.discard)

    async def touch(
        self, game_id: int, seat: int | None, channel_name: str, person: str | None
    ) -> Change:
        loop = asyncio.get_running_loop()
        entry = ((game_id, seat, channel_name, person), loop.create_future())
        if not self.waiting:
            loop.call_soon(self._start_send)
        self.waiting.append(entry)
        try:
            return await asyncio.shield(entry[1])
        except asyncio.CancelledError:
            if entry in self.waiting:
                self.waiting.remove(entry)  # not sent: nothing to wait for
            elif not entry[1].done():
                await asyncio.wait([entry[1]], timeout=CALL_TIMEOUT_SECONDS)
            raise

    async def _send(self) -> None:
        entries, self.waiting = self.waiting, []
        if not entries:
            return
        now = _now_ms()
        try:
            async with (
                asyncio.timeout(CALL_TIMEOUT_SECONDS),
                client().pipeline(transaction=True) as pipe,
            ):
                sizes = [_touch_commands(pipe, now, *args) for args, _ in entries]
                results = await pipe.execute()
        except BaseException as exc:  # each caller reports it as its own touch did
            for _, future in entries:
                if not future.done():
                    future.set_exception(
                        exc if isinstance(exc, Exception) else RedisError("touch cancelled")
                    )
            if not isinstance(exc, Exception):
                raise
            return
        start = 0
        for (args, future), size in zip(entries, sizes, strict=True):
            if not future.done():
                future.set_result(_touch_change(args[1], results[start : start + size]))
            start += size


_touches: dict[asyncio.AbstractEventLoop, _Touches] = {}


def next_beat_in(loop: asyncio.AbstractEventLoop) -> float:
    """Seconds to the next multiple of ``REFRESH_SECONDS`` on the loop's clock: every
    heartbeat of a process wakes at the same instants, so their touches share one send."""
    period = REFRESH_SECONDS
    now = loop.time()
    return max(0.0, (now // period + 1) * period - now)


async def leave(game_id: int, seat: int | None, channel_name: str) -> Change:
    """Remove this socket; the table's presence afterwards."""
    now = _now_ms()
    seats_key, spectators_key = _key(game_id), _spectators_key(game_id)
    async with asyncio.timeout(CALL_TIMEOUT_SECONDS), client().pipeline(transaction=True) as pipe:
        if seat is None:
            pipe.zrem(spectators_key, channel_name)
        else:
            pipe.zrem(seats_key, _member(seat, channel_name))
        pipe.zremrangebyscore(seats_key, "-inf", now)
        pipe.zremrangebyscore(spectators_key, "-inf", now)
        pipe.zrange(seats_key, 0, -1)
        pipe.zcard(spectators_key)
        removed, seats_pruned, spectators_pruned, members, count = await pipe.execute()
    return Change(
        seats=_seats(members),
        spectators=int(count),
        seats_changed=bool(seats_pruned or (removed and seat is not None)),
        spectators_changed=bool(spectators_pruned or (removed and seat is None)),
    )


# --- who is online, site-wide -----------------------------------------------------------------

#: A person who opened the lobby counts as online for this long (a table's socket keeps its
#: person online while it is open, and ``TTL_SECONDS`` after).
ONLINE_PAGE_SECONDS = 120


def _online_key() -> str:
    """One sorted set for the site: each person online, scored with when that ends (ms)."""
    prefix = settings.CHANNEL_LAYERS["default"]["CONFIG"].get("prefix", "crisp")
    return f"{prefix}:online"


def person_of(user: Any, channel_name: str) -> str:
    """Who a socket or a page view counts as: the signed-in user (once, however many tabs),
    else that one socket."""
    pk = getattr(user, "pk", None) if getattr(user, "is_authenticated", False) else None
    return f"u{pk}" if pk is not None else f"c{channel_name}"


def seen_online(person: str, seconds: float = ONLINE_PAGE_SECONDS) -> None:
    """Count ``person`` as online for ``seconds`` from now (a page view; synchronous)."""
    from games import timers

    try:
        timers.client().zadd(_online_key(), {person: _now_ms() + int(seconds * 1000)}, gt=True)
    except UNAVAILABLE:
        logger.warning("presence unavailable; a visitor is not counted as online")


def online_count() -> int | None:
    """How many people are online now: with a table's socket open, or who opened the lobby
    within ``ONLINE_PAGE_SECONDS`` (expired members pruned); None if Redis cannot say."""
    from games import timers

    try:
        pipe = timers.client().pipeline(transaction=True)
        pipe.zremrangebyscore(_online_key(), "-inf", _now_ms())
        pipe.zcard(_online_key())
        _, count = pipe.execute()
    except UNAVAILABLE:
        logger.warning("presence unavailable; the online count is not shown")
        return None
    return int(count)


# --- the coalesced spectator count -------------------------------------------------------------

#: The longest a spectator count waits before it goes out; also the shortest time between two
#: counts of one game (across processes: the first change of a period wins a Redis flag).
SPECTATORS_EVERY_SECONDS = 2.0

#: Sends of a count on their way: held here so that none is garbage-collected while it waits.
_counts: set[asyncio.Task[None]] = set()


async def request_count(game_id: int) -> None:
    """A spectator came or went: make sure one `spectators` frame follows within the period.

    The first request of a period (across every process: `SET NX` on a Redis flag) schedules,
    in this process, one send after `SPECTATORS_EVERY_SECONDS`; the others cost one Redis
    round trip and nothing for the other sockets. The send clears the flag *before* reading
    the count, so a change after the read starts the next period and none is missed. The flag
    expires by itself (three periods) if the process that holds it dies before sending.
    """
    flag_ms = max(1, int(SPECTATORS_EVERY_SECONDS * 3000))
    async with asyncio.timeout(CALL_TIMEOUT_SECONDS):
        won = await client().set(_due_key(game_id), b"1", nx=True, px=flag_ms)
    if not won:
        return
    task = asyncio.get_running_loop().create_task(_send_count_later(game_id))
    _counts.add(task)
    task.add_done_callback(_counts.discard)


async def spectator_count(game_id: int) -> int:
    """The number of live spectator sockets of the game (expired members pruned)."""
    key = _spectators_key(game_id)
    async with asyncio.timeout(CALL_TIMEOUT_SECONDS), client().pipeline(transaction=True) as pipe:
        pipe.zremrangebyscore(key, "-inf", _now_ms())
        pipe.zcard(key)
        _, count = await pipe.execute()
    return int(count)


async def _wait_period() -> None:
    """The coalescing wait (tests hold it open, to count what one period gathers)."""
    await asyncio.sleep(SPECTATORS_EVERY_SECONDS)


async def _send_count_later(game_id: int) -> None:
    """After the period: clear the flag, read the count, send one frame to the whole table."""
    from channels.layers import get_channel_layer

    from games import broadcast

    await _wait_period()
    try:
        async with asyncio.timeout(CALL_TIMEOUT_SECONDS):
            await client().delete(_due_key(game_id))
        count = await spectator_count(game_id)
        group, message = broadcast.spectators_message(game_id, count)
        layer = get_channel_layer()
        assert layer is not None
        await layer.group_send(group, message)
    except UNAVAILABLE as exc:  # the flag expires; the next change or beat asks again
        report_unavailable(game_id, exc)
    except Exception:  # presence is advisory: a bug here must not end anything else
        logger.warning("spectator count failed for game %s", game_id, exc_info=True)


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
