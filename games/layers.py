"""Channel-layer variants the settings can select (`CHANNEL_LAYER`).

`PooledRedisChannelLayer` is channels-redis's `RedisChannelLayer` with a *blocking*, sized
connection pool. Why: redis-py's asyncio pool defaults to 100 connections and raises
`MaxConnectionsError` past that, so 800 sockets connecting at once to one daphne process failed
with HTTP 500 (measured on these machines). A blocking pool makes the 101st caller wait for a free
connection (up to `pool_timeout` seconds) instead of failing.

The pool options live beside `hosts` rather than inside each host entry so that settings which
replace `hosts` (crisp_site/test_settings.py) keep them.
"""

from __future__ import annotations

from typing import Any

from channels_redis.core import RedisChannelLayer
from redis import asyncio as aioredis


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
