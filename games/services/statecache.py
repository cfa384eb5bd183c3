"""The game's state as this process last wrote it, so that a change's lock need not read and
parse it again (PostgreSQL only; issue 25, session 21).

Why: every action and timer locks the game row (``commit._lock_with_seats``,
``_lock_playing_with_seats``), which read the whole ``state`` column (~1.9 KB of jsonb):
PostgreSQL outputs it, psycopg carries it, ``JSONField.from_db_value`` parses it. Most of the
time the daphne that locks the row is the one that wrote that very state on the game's
previous change (one daphne: every action of a table). Measured: bench/results/
session21-statecache.md.

How, and why it is exact:

- **Filled after commit only, by the change that wrote the state** (``after_change``, from
  ``commit._engine_change`` right after its write): on commit, the snapshot written, keyed by
  the game and by the identity of the row version that write made: the writer's transaction
  id (``txid_current()``, read with the lock; modulo 2^32, as ``xmin`` is stored) and
  ``Game.version``. A rolled-back change fills nothing (``transaction.on_commit``); a write
  made inside a savepoint fills nothing (its row's ``xmin`` is the subtransaction's id, which
  the lock did not read).
- **The lock asks for the state only when the row is not the one cached** (``lock_columns``):
  in the same statement, ``CASE WHEN xmin = <xid> AND version = <version> THEN NULL ELSE
  state END``, plus the row's ``xmin``. ``xmin`` is set by PostgreSQL on every row version
  any transaction makes (an action, a timer in another process, the admin, a raw ``UPDATE``),
  so a row changed by anyone else since the fill has another ``xmin`` and the state is read
  as before. A hit is told by the database's own answer (the ``xmin`` and ``version`` it
  returns equal the entry's), not by the NULL (a row's state may be NULL).
- **A hit gives exactly what a read would have** (``as_read``): PostgreSQL's ``jsonb`` keeps
  an object's keys sorted (shorter first, then bytewise) and the parse keeps that order, so
  the entry is the snapshot rebuilt in that order, fresh dicts and lists (nothing shared with
  the snapshot the live layer holds). A snapshot with anything but dicts, lists, strings,
  integers, booleans and None (a float, whose text ``jsonb`` may rewrite) is not cached.
- **An entry is used at most once** (``take`` removes it before the lock is sent): the
  change that uses it writes the next state and fills again; two threads of one process
  never share one entry's dicts.
- **The engine's ``GameState`` is not cached**: the engines' states are mutable dataclasses
  (lists, dicts), immutable only by contract, so ``_require_playing`` still builds it from
  the dict (``GameState.from_json``), as after a read.

Limits: SQLite (the embedded default, one process) does not use it (``usable``): its lock
reads the state as before. Within the change's own transaction, a write of the row's state
after the change's own must go through the instance (checked at commit: the instance's state
must still be the snapshot written, its version the one written) -- a second ``UPDATE`` in the
same transaction keeps the same ``xmin``. An ``xmin`` repeats only after 2^32 transactions (the
entry's version must match too, and the cache is bounded), or after the database is restored
to an earlier point under running processes (restart them then, as after any restore).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from django.db import connections, transaction

#: Use the cache (the benches' A/B turns it off: the lock then reads the state as before and
#: nothing is filled).
ENABLED = True
#: Games kept, the least recently filled dropped first.
SIZE = 4096
#: Counts for the benches and tests: "hit", "miss" (an entry the row no longer matched),
#: "fill".
STATS: dict[str, int] = {}

_entries: OrderedDict[int, tuple[int, int, dict[str, Any]]] = OrderedDict()
_guard = threading.Lock()
#: ``xmin`` is 32 bits; ``txid_current()`` carries the epoch above them.
XID_MODULO = 2**32
#: The identity sent when there is no entry: no row has it (versions start at 0).
NO_ENTRY = (-1, -1)


def usable(using: str = "default") -> bool:
    """Whether the lock on ``using`` goes through the cache: PostgreSQL, and ``ENABLED``."""
    return ENABLED and connections[using].vendor == "postgresql"


def take(pk: Any) -> tuple[int, int, dict[str, Any]] | None:
    """Game ``pk``'s entry ``(xid, version, state)``, removed from the cache (used once)."""
    with _guard:
        return _entries.pop(pk, None)


def settle(locked: Any, entry: tuple[int, int, dict[str, Any]] | None) -> None:
    """Give the instance the lock read (``lock_columns``) its ``state``: the entry's when the
    row is the one it was taken from (the ``xmin`` and ``version`` PostgreSQL returned), else
    what the read returned (parsed by the column's own converter)."""
    attrs = locked.__dict__
    value = attrs.pop("lock_state")
    xmin = attrs.pop("lock_xmin")
    if entry is not None:
        if entry[0] == xmin and entry[1] == locked.version:
            value = entry[2]
            STATS["hit"] = STATS.get("hit", 0) + 1
        else:
            STATS["miss"] = STATS.get("miss", 0) + 1
    attrs["state"] = value


def after_change(game: Any, snapshot: Any) -> None:
    """Fill the cache with ``snapshot`` on commit, if the game was locked through the cache
    (its ``lock_xid``) and was written outside any savepoint; call right after the write.
    Nothing on rollback."""
    xid = game.__dict__.get("lock_xid")
    if xid is None or not ENABLED:
        return
    using = game._state.db or "default"
    if any(sid is not None for sid in connections[using].savepoint_ids):
        return  # written by a subtransaction: the row's xmin is not ``xid``
    version = game.version

    def fill() -> None:
        if game.state is not snapshot or game.version != version or game.status != "playing":
            return  # the row was written again after this change (or the game ended)
        value = as_read(snapshot)
        if value is None:
            return
        with _guard:
            _entries[game.pk] = (xid, version, value)
            _entries.move_to_end(game.pk)
            while len(_entries) > SIZE:
                _entries.popitem(last=False)
        STATS["fill"] = STATS.get("fill", 0) + 1

    transaction.on_commit(fill, using=using, robust=True)


def clear() -> None:
    with _guard:
        _entries.clear()


class _NotPlain(Exception):
    pass


_ATOMS = (str, int, bool, type(None))
#: A key tuple -> the same keys in ``jsonb``'s order (a state's dicts have a few shapes).
_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}
_ORDERS_MAX = 1024


def _jsonb_key(key: str) -> tuple[int, bytes]:
    """``jsonb``'s order of an object's keys: shorter (in UTF-8 bytes) first, then bytewise."""
    raw = key.encode()
    return len(raw), raw


def _ordered(keys: tuple[str, ...]) -> tuple[str, ...]:
    order = _ORDERS.get(keys)
    if order is None:
        if any(type(k) is not str for k in keys):
            raise _NotPlain
        order = tuple(sorted(keys, key=_jsonb_key))
        if len(_ORDERS) < _ORDERS_MAX:
            _ORDERS[keys] = order
    return order


def _copy(value: Any) -> Any:
    if type(value) is dict:
        out = {}
        for key in _ordered(tuple(value)):
            item = value[key]
            out[key] = item if type(item) in _ATOMS else _copy(item)
        return out
    if type(value) is list:
        for item in value:
            if type(item) not in _ATOMS:
                return [item if type(item) in _ATOMS else _copy(item) for item in value]
        return value[:]
    raise _NotPlain


def as_read(snapshot: Any) -> dict[str, Any] | None:
    """``snapshot`` as the lock would have read it back from the ``jsonb`` column: a fresh copy
    with every object's keys in ``jsonb``'s order; None when it holds anything else than
    dicts (string keys), lists, strings, integers, booleans and None."""
    if type(snapshot) is not dict:
        return None
    try:
        return _copy(snapshot)
    except _NotPlain:
        return None
