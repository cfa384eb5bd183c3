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
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from redis import asyncio as aioredis
from redis.commands.core import AsyncScript
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
            _run_id_reads.pop(old, None)
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

    Every touch of one loop iteration goes to Redis in one script call (``_Touches``,
    ``_TOUCH``): the heartbeats of a process's sockets wake together (``next_beat_in``), so a
    tick costs one round trip, not one per socket (bench/RESULTS.md, session 15), and little
    Python per socket (session 18). A touch cancelled before its batch is sent is left out of
    it; one cancelled while its batch is in flight waits for the batch (bounded), so a closed
    socket's ``leave`` never runs before its last refresh lands.
    """
    touches = _touches.get(asyncio.get_running_loop())
    if touches is None:
        touches = _touches[asyncio.get_running_loop()] = _Touches()
    return await touches.touch(game_id, seat, channel_name, person)


#: One tick's touches, server-side: each socket's refresh as main's per-socket commands did it
#: (online ``ZADD GT``; prune both sets; ``ZADD`` the member; ``PEXPIRE`` its set), in order,
#: so each touch sees the table as its own refresh left it. What comes back is what the callers
#: need, as one JSON string: per touch ``0`` when the table is as the game's previous touch of
#: this send left it (no member added, nothing pruned), else ``[flags, spectators, seat, n,
#: ...]`` (flags: 1 seats changed, 2 spectators changed); a game's first touch always carries
#: its table. Pruning once per game and send, and ``PEXPIRE`` once per set at the end, give
#: the same sets and TTLs: a member this send adds expires after ``now``, so a second prune at
#: ``now`` removes nothing.
#:
#: The reply also carries the server's run id when ARGV[5] asks for it (``server_run_id``'s
#: cache is stale: each caller asks right after its touch, so this is its one read).
#:
#: KEYS: the online set, then each game's seats and spectators sets (game g at 2g, 2g+1).
#: ARGV: now (ms), the members' expiry (ms), the sets' PEXPIRE (ms), the touches as JSON
#: ``[[g, seat or null, channel name, person or null], ...]``, "1" to read the run id.
#: Reply: JSON ``[run id or "", [per touch, ...]]``.
_TOUCH = """
local now, expiry, keep = ARGV[1], ARGV[2], ARGV[3]
local null = cjson.null
local out, pruned, kept = {}, {}, {}
for i, t in ipairs(cjson.decode(ARGV[4])) do
  local g, seat, channel, person = t[1], t[2], t[3], t[4]
  local seats_key, spectators_key = KEYS[2 * g], KEYS[2 * g + 1]
  if person ~= null then redis.call('ZADD', KEYS[1], 'GT', expiry, person) end
  local seats_changed, spectators_changed, first = false, false, not pruned[g]
  if first then
    pruned[g] = true
    seats_changed = redis.call('ZREMRANGEBYSCORE', seats_key, '-inf', now) > 0
    spectators_changed = redis.call('ZREMRANGEBYSCORE', spectators_key, '-inf', now) > 0
  end
  if seat == null then
    if redis.call('ZADD', spectators_key, expiry, channel) > 0 then spectators_changed = true end
    kept[spectators_key] = true
  else
    if redis.call('ZADD', seats_key, expiry, seat .. '|' .. channel) > 0 then
      seats_changed = true
    end
    kept[seats_key] = true
  end
  local flags = (seats_changed and 1 or 0) + (spectators_changed and 2 or 0)
  if flags == 0 and not first then
    out[i] = 0
  else
    local entry, at = {flags, redis.call('ZCARD', spectators_key)}, {}
    for _, m in ipairs(redis.call('ZRANGE', seats_key, 0, -1)) do
      local bar = string.find(m, '|', 1, true)
      local s = bar and string.sub(m, 1, bar - 1) or m
      if at[s] then
        entry[at[s]] = entry[at[s]] + 1
      else
        entry[#entry + 1] = s
        entry[#entry + 1] = 1
        at[s] = #entry
      end
    end
    out[i] = entry
  end
end
for key in pairs(kept) do redis.call('PEXPIRE', key, keep) end
local run_id = ''
if ARGV[5] == '1' then
  run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)') or ''
end
return cjson.encode({run_id, out})
"""

_scripts: dict[str, AsyncScript] = {}


def _script(redis: aioredis.Redis, source: str) -> AsyncScript:
    """``source`` as an EVALSHA-first script (redis-py loads it again after a ``NOSCRIPT``:
    a Redis restart or ``SCRIPT FLUSH``). Its SHA does not depend on the client, so one
    object serves every loop's client (each call names its client)."""
    found = _scripts.get(source)
    if found is None:
        found = _scripts[source] = redis.register_script(source)
    return found


class _Touches:
    """One loop's touches waiting for the next send: all of them in one script call.

    The per-socket part of a tick is a future, four JSON values out and a ``0`` back (most
    ticks change nothing); main's transaction was 6-7 commands per socket queued, packed and
    parsed in Python (bench/presence_cpu.py, bench/results/session18-tick.md). The same call
    refreshes ``server_run_id``'s cache when it is stale, so the callers' next question is
    answered without a round trip of its own.
    """

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
            return await entry[1]  # cancelling the caller cancels it: the send skips it
        except asyncio.CancelledError:
            if entry in self.waiting:
                self.waiting.remove(entry)  # not sent: nothing to wait for
            elif self.sending:  # its send may be in flight: let it land first
                await asyncio.wait(list(self.sending), timeout=CALL_TIMEOUT_SECONDS)
            raise

    async def _send(self) -> None:
        entries, self.waiting = self.waiting, []
        if not entries:
            return
        now = _now_ms()
        keys = [_online_key()]
        games: dict[int, int] = {}
        touches = []
        for (game_id, seat, channel_name, person), _ in entries:
            g = games.get(game_id)
            if g is None:
                g = games[game_id] = len(games) + 1
                keys += (_key(game_id), _spectators_key(game_id))
            touches.append((g, None if seat is None else str(seat), channel_name, person))
        loop = asyncio.get_running_loop()
        cached = _run_ids.get(loop)
        read_run_id = cached is None or time.monotonic() - cached[0] >= 1.0
        args = (
            now,
            now + TTL_SECONDS * 1000,
            TTL_SECONDS * 2000,
            json.dumps(touches),
            "1" if read_run_id else "0",
        )
        try:
            async with asyncio.timeout(CALL_TIMEOUT_SECONDS):
                redis = client()
                reply = await _script(redis, _TOUCH)(keys, args, client=redis)
            run_id, items = json.loads(reply)
            changes = _changes([args for args, _ in entries], items)
            if read_run_id:
                _run_ids[loop] = (time.monotonic(), run_id)
        except BaseException as exc:  # each caller reports it as its own touch did
            for _, future in entries:
                if not future.done():
                    future.set_exception(
                        exc if isinstance(exc, Exception) else RedisError("touch cancelled")
                    )
            if not isinstance(exc, Exception):
                raise
            return
        for (_, future), change in zip(entries, changes, strict=True):
            if not future.done():
                future.set_result(change)


def _changes(touches: list[tuple[Any, ...]], reply: list[Any]) -> list[Change]:
    """Each touch's `Change` from the script's reply (``_TOUCH``). A ``0`` is the table as the
    game's previous touch left it, unchanged: those share one `Change` (not to be mutated)."""
    tables: dict[int, Change] = {}
    changes = []
    for (game_id, *_), item in zip(touches, reply, strict=True):
        if item == 0:
            change = tables[game_id]
        else:
            flags, count, *flat = item
            seats = dict(zip(flat[::2], flat[1::2], strict=True))
            change = Change(seats, count, bool(flags & 1), bool(flags & 2))
            tables[game_id] = Change(seats, count, False, False) if flags else change
        changes.append(change)
    return changes


_touches: dict[asyncio.AbstractEventLoop, _Touches] = {}


#: A process's heartbeats wake on this many phases of the period, each game's sockets always on
#: the same one (``beat_phase``): a tick's touches go in one send per phase, so the loop is held
#: by a fifth of the sockets at a time, not by all of them at once (session 18: 1,000 sockets
#: in one burst kept other sockets' frames waiting tens of ms).
BEAT_PHASES = 5


def beat_phase(game_id: int) -> float:
    """The phase of a game's sockets, a fraction of the period: fixed, so a socket's beats
    stay ``REFRESH_SECONDS`` apart; by game, not by socket, so a send reads each of its
    tables once (by socket, nearly every touch was its game's first of the send and came back
    with the table: +55 % of the tick's CPU at 1,000 sockets)."""
    return (game_id % BEAT_PHASES) / BEAT_PHASES


def next_beat_in(loop: asyncio.AbstractEventLoop, phase: float = 0.0) -> float:
    """Seconds to the next multiple of ``REFRESH_SECONDS`` (shifted by ``phase`` of it) on the
    loop's clock: every heartbeat of a process on one phase wakes at the same instants, so
    their touches share one send."""
    period = REFRESH_SECONDS
    now = loop.time() - phase * period
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
#: The one `INFO` of a loop on its way, shared by every caller that found the cache stale.
_run_id_reads: dict[asyncio.AbstractEventLoop, asyncio.Task[str]] = {}


async def server_run_id() -> str:
    """The Redis server's run id: it changes when Redis restarts (groups may then be gone).

    Cached for a second per process and loop, and read by one `INFO` at a time: every socket
    of a process asks right after its touch of a beat (``next_beat_in``), when the cache is
    always stale (the beat is longer than a second), so without the shared read a tick of
    400 sockets sent 400 `INFO`s and parsed 400 replies (bench/results/session18-tick.md). A
    caller cancelled while the read is on its way stops waiting; the read goes on for the
    others (bounded by ``CALL_TIMEOUT_SECONDS``).
    """
    loop = asyncio.get_running_loop()
    cached = _run_ids.get(loop)
    if cached is not None and time.monotonic() - cached[0] < 1.0:
        return cached[1]
    read = _run_id_reads.get(loop)
    if read is None:
        read = _run_id_reads[loop] = loop.create_task(_read_run_id(loop))
        read.add_done_callback(_run_id_read_done)
    return await asyncio.shield(read)


async def _read_run_id(loop: asyncio.AbstractEventLoop) -> str:
    async with asyncio.timeout(CALL_TIMEOUT_SECONDS):
        info = await client().info("server")
    run_id = str(info.get("run_id", ""))
    _run_ids[loop] = (time.monotonic(), run_id)
    return run_id


def _run_id_read_done(read: asyncio.Task[str]) -> None:
    """The next stale caller starts a new read; a failure nobody waited for is not logged
    as never retrieved (each waiting caller got it and reports it)."""
    if _run_id_reads.get(read.get_loop()) is read:
        del _run_id_reads[read.get_loop()]
    if not read.cancelled():
        read.exception()
