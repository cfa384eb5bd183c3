"""The server's clock, in one place so tests can control time.

The engine never reads a clock: the service layer passes it ``now`` in integer milliseconds.
Every place in ``games`` that needs the time calls ``clock.now_ms()`` (through the module, not a
copied name), so a test can ``monkeypatch.setattr("games.clock.now_ms", lambda: 1234)`` and
drive deadlines, windows and timeouts exactly.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now_ms() -> int:
    """Milliseconds since the Unix epoch, as the engine wants them."""
    return time.time_ns() // 1_000_000


def to_datetime(ms: int) -> datetime:
    """An engine instant as an aware UTC datetime (for DateTimeFields and Celery ETAs)."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def from_datetime(dt: datetime) -> int:
    """An aware datetime as engine milliseconds."""
    return int(dt.timestamp() * 1000)


def now() -> datetime:
    """The current instant as a datetime, consistent with ``now_ms`` (so overrides apply)."""
    return to_datetime(now_ms())
