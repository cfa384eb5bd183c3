"""Channel-layer variants the settings can select (`CHANNEL_LAYER`).

Both add `group_send_many`: the messages of one change (one per redaction group, see
`games.broadcast`) go to Redis in one round trip per Redis host instead of one or more per
group. Why: a change of a 3-seat table sent 4 `group_send`s, each its own write/read syscalls
on the daphne and on Redis (pub/sub: 4 `PUBLISH` round trips one after the other behind the
shard's lock; classic: 4 round trips *per group*). The per-message syscalls, not Python, were
most of the daphne's CPU per action (bench/RESULTS.md, session 14, second round). Each keeps its
base class's delivery semantics exactly; `broadcast.send_all` falls back to `group_send`s for a
layer without it (the in-memory layer).

`PooledRedisChannelLayer` is channels-redis's `RedisChannelLayer` with a *blocking*, sized
connection pool. Why: redis-py's asyncio pool defaults to 100 connections and raises
`MaxConnectionsError` past that, so 800 sockets connecting at once to one daphne process failed
with HTTP 500 (measured on these machines). A blocking pool makes the 101st caller wait for a free
connection (up to `pool_timeout` seconds) instead of failing.

The pool options live beside `hosts` rather than inside each host entry so that settings which
replace `hosts` (crisp_site/test_settings.py) keep them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import defaultdict
from typing import Any

import redis
from channels_redis.core import RedisChannelLayer
from channels_redis.pubsub import RedisPubSubChannelLayer, RedisPubSubLoopLayer
from channels_redis.utils import decode_hosts
from redis import asyncio as aioredis

logger = logging.getLogger(__name__)

#: One call per Redis host for every group of a change. Per channel key (ARGV: messages, then
#: capacities, then now, the expiry cutoff, the expiry): drop expired messages, then push unless
#: full -- what `RedisChannelLayer.group_send` does in a pipeline and a script per group. A key
#: may come more than once (a process's sockets in several groups share its key): each push
#: counts against the capacity of the pushes before it, as sequential `group_send`s would.
#: Returns how many pushes each key's entry found its channel full.
_GROUP_SEND_MANY_LUA = """
local n = #KEYS
local now = ARGV[2 * n + 1]
local cutoff = ARGV[2 * n + 2]
local expiry = ARGV[2 * n + 3]
local full = {}
for i = 1, n do
    redis.call('ZREMRANGEBYSCORE', KEYS[i], 0, cutoff)
    if redis.call('ZCOUNT', KEYS[i], '-inf', '+inf') < tonumber(ARGV[n + i]) then
        redis.call('ZADD', KEYS[i], now, ARGV[i])
        redis.call('EXPIRE', KEYS[i], expiry)
        full[i] = 0
    else
        full[i] = 1
    end
end
return full
"""


class PooledRedisChannelLayer(RedisChannelLayer):
    """RedisChannelLayer whose per-loop pools block (bounded wait) instead of raising when full."""

    def __init__(
        self, *args: Any, pool_max_connections: int = 400, pool_timeout: float = 10, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.pool_max_connections = pool_max_connections
        self.pool_timeout = pool_timeout

    def create_pool(self, index: int) -> aioredis.ConnectionPool:
        host = dict(self.hosts[index])
        address = host.pop("address")
        host.setdefault("max_connections", self.pool_max_connections)
        host.setdefault("timeout", self.pool_timeout)
        return aioredis.BlockingConnectionPool.from_url(address, **host)

    async def group_send_many(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        """`group_send(group, message)` for each pair, in two round trips per Redis host.

        The first reads every group's members (after dropping those older than
        `group_expiry`, as `group_send` does); the second pushes each group's message to each
        member's channel key in one script per host, with `group_send`'s expiry cleanup,
        capacity check and `__asgi_channel__` routing of process-local channels (the message
        per key is built and serialised by channels-redis's own `_map_channel_keys_to_connection`,
        so encryption and the serialiser are its own).
        """
        if not messages:
            return
        for group, _ in messages:
            assert self.require_valid_group_name(group), "Group name not valid"
        # 1. Members of every group, one pipeline per host holding groups.
        group_hosts: dict[int, list[int]] = defaultdict(list)  # host -> indexes in `messages`
        for i, (group, _) in enumerate(messages):
            group_hosts[self.consistent_hash(group)].append(i)
        members: list[list[str]] = [[] for _ in messages]

        async def read(index: int, positions: list[int]) -> None:
            pipe = self.connection(index).pipeline(transaction=False)
            cutoff = int(time.time()) - self.group_expiry
            for i in positions:
                key = self._group_key(messages[i][0])
                pipe.zremrangebyscore(key, min=0, max=cutoff)
                pipe.zrange(key, 0, -1)
            results = await pipe.execute()
            for n, i in enumerate(positions):
                members[i] = [x.decode("utf8") for x in results[2 * n + 1]]

        await asyncio.gather(*(read(index, pos) for index, pos in group_hosts.items()))
        # 2. Every group's pushes, one script per host holding channels.
        pushes: dict[int, list[tuple[bytes, bytes, int, int]]] = defaultdict(list)
        for i, (_, message) in enumerate(messages):
            by_host, key_message, key_capacity = self._map_channel_keys_to_connection(
                members[i], message
            )
            for index, keys in by_host.items():
                pushes[index].extend((k, key_message[k], key_capacity[k], i) for k in keys)

        async def push(index: int, entries: list[tuple[bytes, bytes, int, int]]) -> None:
            now = time.time()
            args = [
                *(e[1] for e in entries),
                *(e[2] for e in entries),
                now,
                int(now) - int(self.expiry),
                self.expiry,
            ]
            keys = [e[0] for e in entries]
            full = await self.connection(index).eval(_GROUP_SEND_MANY_LUA, len(keys), *keys, *args)
            over: dict[int, int] = defaultdict(int)
            for entry, was_full in zip(entries, full, strict=True):
                over[entry[3]] += int(was_full)
            for i, count in over.items():
                if count:
                    logger.info(
                        "%s of %s channels over capacity in group %s",
                        count,
                        len(members[i]),
                        messages[i][0],
                    )

        await asyncio.gather(*(push(index, entries) for index, entries in pushes.items()))


class PubSubChannelLayer(RedisPubSubChannelLayer):
    """channels-redis's pub/sub layer, with the messages of a change in one pipeline per shard.

    `group_send_many` publishes exactly what `group_send` would (the same channel name, the
    same serialised bytes), under the same per-shard lock, but as one pipeline per shard
    (not a transaction: `PUBLISH` needs none, as `group_send`'s sequence had none). It uses the
    loop layer's internals (`_get_shard`, the shard's `_lock`, `_ensure_redis`, `_redis`) of
    channels-redis 4.3; tests/live/test_layers.py fails if they change.
    """

    async def group_send_many(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        """`group_send(group, message)` for each pair, in one round trip per shard."""
        if not messages:
            return
        layer = self._get_layer()
        by_shard: dict[int, tuple[Any, list[tuple[str, bytes]]]] = {}
        for group, message in messages:
            name = layer._get_group_channel_name(group)
            shard = layer._get_shard(name)
            entry = by_shard.setdefault(id(shard), (shard, []))
            entry[1].append((name, self.serialize(message)))

        async def publish(shard: Any, items: list[tuple[str, bytes]]) -> None:
            async with shard._lock:
                shard._ensure_redis()
                pipe = shard._redis.pipeline(transaction=False)
                for name, data in items:
                    pipe.publish(name, data)
                await pipe.execute()

        await asyncio.gather(*(publish(shard, items) for shard, items in by_shard.values()))

    def publish_many(self, messages: list[tuple[str, dict[str, Any]]], timeout: float) -> None:
        """`group_send_many` from synchronous code, without an event loop: the same `PUBLISH`es
        (the loop layer's own channel names and shard choice, this layer's `serialize`), one
        pipeline per shard, on this thread.

        Why: the live thread (`games.broadcast.Dispatcher`) sent through another thread's event
        loop and waited for it -- two cross-thread wake-ups and an asyncio round trip per
        broadcast, for one pipeline (bench/broadcast_cpu.py; bench/results/session19-live.md).

        Each shard's connection gives up after `timeout` seconds (connect, then each reply) and
        retries nothing (as the loop layer's pool); a shard that fails does not stop the others
        from getting theirs, and the first failure is raised after all were tried (as
        `asyncio.gather` did). Connections are redis-py's blocking ones, a pool per shard and
        timeout, safe across threads and reset after a fork (redis-py checks the pid).
        """
        if not messages:
            return
        assert self.publishes_without_loop, "sentinel hosts publish through the event loop"
        sync = self._sync_publisher()
        by_shard: dict[int, list[tuple[str, bytes]]] = {}
        for group, message in messages:
            name = sync.naming._get_group_channel_name(group)
            shard = sync.naming._get_shard(name)
            by_shard.setdefault(sync.index[id(shard)], []).append((name, self.serialize(message)))
        failure: BaseException | None = None
        for index, items in by_shard.items():
            try:
                sync.publish(index, timeout, items)
            except Exception as error:  # the other shards still get theirs
                failure = failure or error
        if failure is not None:
            raise failure

    @property
    def publishes_without_loop(self) -> bool:
        """Whether `publish_many` can reach every host (plain addresses; not sentinels)."""
        return self._sync_publisher().plain

    def _sync_publisher(self) -> _SyncPublisher:
        publisher = self.__dict__.get("_sync")
        if publisher is None:
            with _SYNC_LOCK:
                publisher = self.__dict__.get("_sync")
                if publisher is None:
                    publisher = self.__dict__["_sync"] = _SyncPublisher(self)
        return publisher


_SYNC_LOCK = threading.Lock()


class _SyncPublisher:
    """What `PubSubChannelLayer.publish_many` needs beside the layer: a loop layer built from
    the same arguments, used only for its naming and shard choice (it opens nothing), and a
    redis-py blocking connection pool per shard and timeout, made on first use."""

    def __init__(self, layer: PubSubChannelLayer) -> None:
        self.naming = RedisPubSubLoopLayer(*layer._args, **layer._kwargs, channel_layer=layer)
        self.index = {id(shard): i for i, shard in enumerate(self.naming._shards)}
        self.hosts = decode_hosts(layer._kwargs.get("hosts"))
        self.plain = not any("master_name" in host for host in self.hosts)
        self._pools: dict[tuple[int, float], redis.ConnectionPool] = {}
        self._lock = threading.Lock()

    def publish(self, index: int, timeout: float, items: list[tuple[str, bytes]]) -> None:
        """`PUBLISH` each (channel, bytes) on shard `index`, pipelined: one write, then every
        reply read. (redis-py's `Pipeline` did the same with a third more CPU, per
        bench/broadcast_cpu.py's session-19 runs.) A connection that failed half-way is dropped,
        not handed to the next caller with replies unread."""
        pool = self.pool(index, timeout)
        connection = pool.get_connection()  # connected, checked (a Redis restart reconnects)
        try:
            connection.send_packed_command(
                connection.pack_commands([("PUBLISH", name, data) for name, data in items])
            )
            for _ in items:
                connection.read_response()
        except BaseException:
            connection.disconnect()
            raise
        finally:
            pool.release(connection)

    def pool(self, index: int, timeout: float) -> redis.ConnectionPool:
        pool = self._pools.get((index, timeout))
        if pool is None:
            with self._lock:
                pool = self._pools.get((index, timeout))
                if pool is None:
                    pool = self._pools[index, timeout] = self._connect(index, timeout)
        return pool

    def _connect(self, index: int, timeout: float) -> redis.ConnectionPool:
        host = dict(self.hosts[index])
        options = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
        address = host.pop("address", None)
        if address is not None:
            return redis.ConnectionPool.from_url(address, **{**host, **options})
        return redis.ConnectionPool(**{**host, **options})
