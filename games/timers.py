"""Timers: every due instant in one Redis sorted set, fired by a loop in each Celery worker.

Why not one Celery countdown (ETA) task per deadline, as before: at timer rates most of a
worker's CPU went to Celery and kombu receiving, holding, scheduling and acknowledging those
tasks (bench/RESULTS.md, the worker's profile: 51 % Celery + kombu, 38 % the timers' own
transactions), and the web process paid for publishing them. Here a deadline costs one `ZADD`
when it is scheduled and a share of one Lua call when it is due.

* `replace` (called on commit through `games.scheduling.schedule_deadlines`, on the process's
  live thread) makes the game's entries exactly the timers its change leaves pending: it puts
  ``"<game id>|<key>"`` in the set with its due instant (ms) as the score, `NX` -- a key
  already waiting keeps its place, so the many changes that pass the same pending key schedule
  it once -- and removes the entries of the keys the change no longer leaves pending.  Why
  remove them: a Crisp turn schedules its draw clock, the player draws within seconds, and
  the entry left behind cost a worker a transaction to find it stale (about 60 % of the
  worker's CPU, bench/results/session18-stale.md).  It knows which keys it scheduled from a
  small per-game record (`record_key`) holding them and the version of the change that
  scheduled them; a call of an older version than the record's (two changes of one game
  handed over by two processes may reach Redis out of order) changes nothing, so it can
  neither remove a newer change's timers nor bring back stale ones.  When the set's earliest
  instant moves earlier, it leaves one token in a wake-up list.  `add` only adds (``NX``),
  touching no record: the loop's put-back of entries it popped but could not fire.
* `TimerLoop`, one thread per Celery worker process (`crisp_site/celery.py` starts it once the
  process is set up), pops what is due -- atomically, so several workers never fire the same
  entry twice -- and hands each to a few threads that ask the service layer to fire it
  (`games.tasks.fire_timer`, handed to `start_loop`: this module does not import the service
  layer, which schedules through it); it pops no more than those threads can soon take
  (``backlog``), so what one busy worker cannot fire yet waits in Redis for another's loop.
  Then it waits for the next due instant: far off, blocked on
  the wake-up list (`BLPOP`), so a new earlier deadline wakes it at once; within the last
  ``_NEAR`` seconds, in a precise sleep of its own (Redis times a `BLPOP` out only to its
  100 ms tick).  It never waits longer than ``CRISP_TIMER_MAX_SLEEP_MS``.  Polling instead
  (every 10 ms) cost more worker CPU than the countdown tasks it replaced (bench/RESULTS.md).

The safety net is unchanged: the engine decides whether a key is still pending and due, so a
stale, duplicated or late firing changes nothing (removing stale entries is only an
optimisation: one that escapes it, e.g. popped while its key was being resolved, is a
no-op), and the periodic sweep enforces from the database every deadline whose entry was
lost (Redis restarted without persistence, a worker killed between popping an entry and
firing it, Redis down when a change was scheduled).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import redis
from django.conf import settings

logger = logging.getLogger(__name__)

#: The wake-up rule both scripts end with (``before``: the set's earliest entry at their start).
_WAKE = """
local after = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #after > 0 and (#before == 0 or tonumber(after[2]) < tonumber(before[2])) then
  redis.call('DEL', KEYS[2])
  redis.call('RPUSH', KEYS[2], after[2])
end
"""

#: Add the (score, member) pairs of ARGV, NX; if the earliest score moved earlier, leave its
#: instant as the one token of the wake-up list KEYS[2].
_ADD = (
    """
local before = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
for i = 1, #ARGV, 2 do redis.call('ZADD', KEYS[1], 'NX', ARGV[i], ARGV[i + 1]) end
"""
    + _WAKE
    + "return 0\n"
)

#: Make the game's entries exactly the (score, key) pairs of ARGV[6..] -- unless the game's
#: record KEYS[3] says a change of version ARGV[1] or newer already did, less than ARGV[5] ms
#: ago (then nothing).  The entries ("ARGV[2]<key>") of the keys the record holds and ARGV no
#: longer lists are removed, the listed ones added NX; the record then holds the version, when
#: it was written and the listed keys, and expires ARGV[3] ms after the latest of ARGV[4] (now)
#: and their instants.  The wake-up rule is `_ADD`'s.
_REPLACE = (
    """
local seen = redis.call('HMGET', KEYS[3], 'v', 'w')
if seen[1] and tonumber(seen[1]) >= tonumber(ARGV[1])
  and tonumber(ARGV[4]) - tonumber(seen[2] or 0) < tonumber(ARGV[5]) then return 0 end
local before = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local listed = {}
for i = 6, #ARGV, 2 do listed[ARGV[i + 1]] = true end
local gone = {}
for _, field in ipairs(redis.call('HKEYS', KEYS[3])) do
  local key = string.sub(field, 3)
  if string.sub(field, 1, 2) == 'k:' and not listed[key] then gone[#gone + 1] = ARGV[2] .. key end
end
for i = 1, #gone, 500 do
  redis.call('ZREM', KEYS[1], unpack(gone, i, math.min(i + 499, #gone)))
end
redis.call('DEL', KEYS[3])
local record = {'v', ARGV[1], 'w', ARGV[4]}
local last = tonumber(ARGV[4])
for i = 6, #ARGV, 2 do
  redis.call('ZADD', KEYS[1], 'NX', ARGV[i], ARGV[2] .. ARGV[i + 1])
  record[#record + 1] = 'k:' .. ARGV[i + 1]
  record[#record + 1] = ARGV[i]
  if tonumber(ARGV[i]) > last then last = tonumber(ARGV[i]) end
end
redis.call('HSET', KEYS[3], unpack(record))
redis.call('PEXPIREAT', KEYS[3], last + tonumber(ARGV[3]))
"""
    + _WAKE
    + """return 1
"""
)

#: How long a game's record (`_REPLACE`) outlives its latest timer (or the change, if it left
#: none): long enough that a call handed over late (seconds at worst) still finds it and is
#: dropped.  Past it, such a call would only add entries that fire as no-ops.
RECORD_GRACE_MS = 10 * 60 * 1000

#: How long a record keeps a call of its version or an older one out.  Two changes of one game
#: handed over by two processes arrive out of order by milliseconds, seconds at worst; a record
#: older than this that holds a newer version is another incarnation's -- the database restored
#: or recreated (a test run after another, on a Redis that kept the first's records) while Redis
#: kept its keys -- and must not keep the game's timers out until it expires (days, for a game
#: played a move a day): its keys are replaced, as a first call's would be.
RECORD_FRESH_MS = 60 * 1000

#: A wait shorter than this is slept in Python; a longer one blocks on the wake-up list until
#: this long before the instant (Redis rounds a BLPOP's timeout up to its 100 ms tick).
_NEAR = 0.25

#: Pop the due entries (at most ARGV[2]) and say when the next one is due.
_POP_DUE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #nxt > 0 then return {due, nxt[2]} end
return {due}
"""


_redis: redis.Redis | None = None


def client() -> redis.Redis:
    """One thread-safe client (and pool) per process, made on first use: the timers' set, the
    scheduling of deadlines (``games.scheduling``) and the presence checks of the sweep."""
    global _redis
    if _redis is None:
        _redis = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)
    return _redis


_scripts: dict[tuple[int, str], Any] = {}  # (id(client), script) -> registered script


def _script(client: redis.Redis, source: str) -> Any:
    """``source`` registered on ``client`` (EVALSHA from then on; reloaded after a restart)."""
    key = (id(client), source)
    script = _scripts.get(key)
    if script is None:
        script = _scripts[key] = client.register_script(source)
    return script


def set_key() -> str:
    """The sorted set's name, under the channel layer's prefix (one per test run, too)."""
    prefix = settings.CHANNEL_LAYERS["default"]["CONFIG"].get("prefix", "crisp")
    return f"{prefix}:timers"


def wake_key() -> str:
    """The wake-up list: one token when the set's earliest instant moved earlier."""
    return set_key() + ":wake"


def _ms(due: datetime | int | float) -> int:
    if isinstance(due, datetime):
        if due.tzinfo is None:
            due = due.replace(tzinfo=UTC)
        return int(due.timestamp() * 1000)
    return int(due)


def add(client: redis.Redis, game_id: int, deadlines: Iterable[tuple[str, datetime]]) -> None:
    """Schedule each ``(key, due)`` of the game, once (a key already waiting is kept)."""
    args: list[Any] = []
    for key, due in deadlines:
        args += [_ms(due), f"{game_id}|{key}"]
    if args:
        _script(client, _ADD)(keys=[set_key(), wake_key()], args=args, client=client)


def record_key(game_id: int) -> str:
    """The game's record (`replace`): the version of the last change that scheduled its
    timers, and their keys."""
    return f"{set_key()}:game:{game_id}"


def replace(
    client: redis.Redis,
    game_id: int,
    version: int,
    deadlines: Iterable[tuple[str, datetime]],
    *,
    now_ms: int | None = None,
) -> bool:
    """Make the game's timers exactly ``deadlines`` (``(key, due)``), as of the change of
    ``version``: the entries of the keys it no longer lists are removed, the new ones added
    (a key already waiting keeps its place).  False: a change of this version or a newer one
    already scheduled, and nothing changed (module docstring).  One ``EVALSHA``."""
    args: list[Any] = [
        version,
        f"{game_id}|",
        RECORD_GRACE_MS,
        int(time.time() * 1000) if now_ms is None else now_ms,
        RECORD_FRESH_MS,
    ]
    for key, due in deadlines:
        args += [_ms(due), key]
    keys = [set_key(), wake_key(), record_key(game_id)]
    return bool(_script(client, _REPLACE)(keys=keys, args=args, client=client))


def pop_due(
    client: redis.Redis, now_ms: int, limit: int
) -> tuple[list[tuple[int, str]], int | None]:
    """The entries due at ``now_ms`` (removed from the set; at most ``limit``) as
    ``(game_id, key)``, and the instant the next one left is due (``None``: none left)."""
    res = _script(client, _POP_DUE)(keys=[set_key()], args=[now_ms, limit], client=client)
    due = []
    for raw in res[0]:
        member = raw.decode() if isinstance(raw, bytes) else raw
        game, _, key = member.partition("|")
        if game.isdigit() and key:
            due.append((int(game), key))
    nxt = int(float(res[1])) if len(res) > 1 else None
    return due, nxt


class TimerLoop(threading.Thread):
    """Pops due entries and fires them on ``threads`` threads (module docstring)."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        max_sleep_ms: float,
        threads: int,
        fire: Callable[[int, str], None],
        batch: int = 200,
        backlog: int | None = None,
    ) -> None:
        super().__init__(name="crisp-timers", daemon=True)
        self.client = client
        self.max_sleep = max_sleep_ms / 1000.0
        self.batch = batch
        #: Entries popped and not yet fired, at most: the firing threads plus as many waiting.
        #: Why a bound: an overloaded worker that popped everything due would queue it in its
        #: own memory, late, while an idle worker's loop found the set empty (and a killed
        #: worker would lose the lot to the sweep).  Bounded, what this worker cannot fire yet
        #: stays in Redis for whichever loop is free.
        self.backlog = backlog if backlog is not None else 2 * threads
        self.fire = fire
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="crisp-timer")
        self.stopping = threading.Event()
        self.fired = 0
        self.in_flight = 0
        self._slots = threading.Condition()

    def _free_slots(self) -> int:
        """Wait (up to 0.1 s at a time, for ``stop``) until a popped entry may be taken on;
        how many may."""
        with self._slots:
            while self.in_flight >= self.backlog and not self.stopping.is_set():
                self._slots.wait(0.1)
            return self.backlog - self.in_flight

    def _fire_one(self, game_id: int, key: str) -> None:
        try:
            self.fire(game_id, key)
        finally:
            with self._slots:
                self.in_flight -= 1
                self._slots.notify()

    def run(self) -> None:
        failing = False
        while not self.stopping.is_set():
            limit = min(self.batch, self._free_slots())
            if self.stopping.is_set():
                break
            now = int(time.time() * 1000)
            try:
                due, nxt = pop_due(self.client, now, limit)
            except redis.RedisError:
                if not failing:  # once per outage, not 100 lines a second
                    logger.warning("timers: Redis unavailable; the sweep enforces deadlines")
                failing = True
                self.stopping.wait(1.0)
                continue
            if failing:
                logger.warning("timers: Redis is back")
                failing = False
            handed = self._hand_over(due)
            self.fired += handed
            if handed < len(due):
                return  # the process is shutting down; what it popped is back in the set
            if len(due) == limit:
                continue  # more may be due now (or the firing threads are all busy)
            wait = self.max_sleep if nxt is None else min(self.max_sleep, (nxt - now) / 1000.0)
            if wait <= 0:
                continue
            if wait <= _NEAR:
                self.stopping.wait(wait)
                continue
            try:  # woken by an earlier deadline, or shortly before this one
                self.client.blpop([wake_key()], timeout=max(0.1, wait - _NEAR + 0.1))
            except redis.RedisError:
                self.stopping.wait(0.1)  # the pop above reports an outage

    def _hand_over(self, due: list[tuple[int, str]]) -> int:
        """Give each popped entry to a firing thread; how many were taken.

        Once the process is shutting down its executor refuses new work (``RuntimeError``):
        the entries not taken go back into the set, due now, for another worker's loop or
        this worker's next start (the sweep would enforce them anyway), and the loop ends
        quietly instead of dying with a traceback and leaving them to the sweep.
        """
        for i, (game_id, key) in enumerate(due):
            with self._slots:
                self.in_flight += 1
            try:
                self.pool.submit(self._fire_one, game_id, key)
            except RuntimeError:
                with self._slots:
                    self.in_flight -= 1
                self.stopping.set()
                left = due[i:]
                now = datetime.now(tz=UTC)
                try:
                    for gid, k in left:
                        add(self.client, gid, [(k, now)])
                except redis.RedisError:
                    logger.warning("timers: %d due entries left to the sweep", len(left))
                else:
                    logger.info("timers: stopping; %d due entries put back", len(left))
                return i
        return len(due)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop popping; let the firings already handed over finish."""
        self.stopping.set()
        # Wake it from its BLPOP (a token another process's loop takes is harmless).
        with contextlib.suppress(redis.RedisError):
            self.client.rpush(wake_key(), "stop")
        if self.ident is not None:  # started (joining a thread never started raises)
            self.join(timeout)
        self.pool.shutdown(wait=True)


_loop: TimerLoop | None = None
_loop_lock = threading.Lock()


def start_loop(fire: Callable[[int, str], None]) -> TimerLoop:
    """This process's loop, started on the first call (a Celery worker process, once), firing
    each due entry with ``fire(game_id, key)`` (``games.tasks.fire_timer``: it asks the service
    layer, which this module does not import -- the service layer schedules through it)."""
    global _loop
    with _loop_lock:
        if _loop is None or not _loop.is_alive():
            _loop = TimerLoop(
                client(),
                max_sleep_ms=settings.CRISP_TIMER_MAX_SLEEP_MS,
                threads=settings.CRISP_TIMER_THREADS,
                fire=fire,
            )
            _loop.start()
        return _loop


def stop_loop() -> None:
    """Stop this process's loop, if it runs (a worker shutting down; tests)."""
    global _loop
    with _loop_lock:
        loop, _loop = _loop, None
    if loop is not None and loop.is_alive():
        loop.stop()
