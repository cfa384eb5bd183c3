"""ORM reads compiled to SQL once per process instead of per call (the game's hot path, the
REST reads, the API token's lookup).

Why: most of what a locking read or the seats' read cost a daphne process was Django building
the SQL (``names_to_path``, ``add_q``, ``as_sql``) for a statement that never changes but for
its key -- ~0.4 ms for the row lock and ~0.7 ms for the seats against ~0.07 ms each through a
cursor (bench/RESULTS.md, "Scale", sessions 4 and 8). A ``Prepared`` read is the same ORM
query, compiled once per database alias with a stand-in key; each call runs that SQL with the
real key and builds the instances with Django's own converters and the ``select_related``
populators' logic (the instances themselves without ``Model.__init__`` where that is the same
instance: ``crisp_site.rows``), so what the service layer gets is what the queryset would have
given (deferred columns included: they load on access, as with ``.only()``).

Only for reads whose SQL depends on nothing but their keys: integers (the game's primary key, a
round's number) or strings (an API token's key hash, compared for equality).

Here, in the project's package, rather than in ``games.services.prepared`` (where it began, and
which still offers it): ``accounts`` does not import ``games`` (imports flow one way), and the API
token's lookup, a string-keyed read built per request, was the largest part of every token
request's bare stack (bench/RESULTS.md, "REST reads", session 16).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.backends.utils import CursorWrapper
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators
from django.db.transaction import TransactionManagementError

from crisp_site.rows import Rows, rows_for

#: The stand-in keys the SQL is compiled with (found again in its parameters, then replaced):
#: within every integer column's range, or the ORM would compile "no rows" instead.
_STAND_IN = 30_011
#: A string key's stand-in (the i-th key's is this and i): a value no real key is.
_STAND_IN_TEXT = "\x00prepared-stand-in-"
#: The range of a 64-bit key column: the ORM turns a key outside it into "no row" (Django
#: 5.0+); a cursor would raise an error from the database instead.
_KEY_MIN, _KEY_MAX = -(2**63), 2**63 - 1


#: Bind the hot path's statements server-side, prepared once per connection (``binding_cursor``,
#: ``fetch_together``, ``games.services.prepared.ChangeWrite``). False: as before, every value
#: quoted into fresh SQL text (psycopg's ``ClientCursor``, Django's default) -- the switch the
#: in-process A/B of ``bench/prepared_cpu.py`` flips call by call.
SERVER_BINDING = True


def server_binding() -> bool:
    """Whether the hot path binds server-side now: the module's switch (the benches' A/B) and
    the ``DB_SERVER_BINDING`` setting (off behind a pooler that does not keep a session per
    client, e.g. PgBouncer in transaction mode: a prepared statement belongs to one session)."""
    from django.conf import settings

    return SERVER_BINDING and getattr(settings, "DB_SERVER_BINDING", True)


#: The count after which psycopg would prepare a statement by itself: never (Django turns
#: psycopg's preparing off, ``prepare_threshold=None``; it must be on for ``prepare=True`` to
#: prepare at all, and only the statements executed with ``prepare=True`` are, all of them ours).
_NEVER_BY_COUNT = 2**62


#: Send a transaction's ``BEGIN`` in the message of its first statement when that statement is
#: one of ours (``fetch_together``: an action's and a timer's lock + seats; ``Prepared.fetch``):
#: one round trip fewer per transaction (session 19). False: psycopg sends it on its own first,
#: and waits for its answer, as before -- the switch the benches' in-process A/B flips.
BEGIN_WITH_FIRST = True
_IDLE = 0  # psycopg.pq.TransactionStatus.IDLE: no transaction open on the session


def _begin_first(raw: Any) -> str:
    """The ``BEGIN`` psycopg is about to send by itself before the next statement on ``raw``
    (a psycopg connection out of autocommit, none open: Django's outermost ``atomic`` has not
    run a statement yet), as text to send in front of that statement; else "".

    Why: psycopg opens a transaction lazily, with ``BEGIN`` as a round trip of its own before
    the first statement (``Connection._start_query``): one of an action's four (``BEGIN``, lock
    + seats, the write, ``COMMIT``) on the daphne's one database thread, each a send and a
    receive there and a message for the backend. The statement it is sent with runs in the
    transaction it opens; what Django and psycopg see afterwards is what they would have seen
    (``_with_begin``): a transaction open on the session, psycopg out of autocommit, Django's
    ``atomic`` none the wiser (its ``COMMIT``, ``ROLLBACK``, ``on_commit`` as before).
    """
    if not BEGIN_WITH_FIRST:
        return ""
    try:  # psycopg's own state (3.1+); a psycopg without it: its BEGIN, as before
        if raw._autocommit or raw._pipeline is not None or raw.pgconn.transaction_status != _IDLE:
            return ""
        return raw._get_tx_start_command().decode() + "; "
    except AttributeError:  # pragma: no cover - another psycopg
        return ""


def _with_begin(cursor: CursorWrapper, raw: Any, sql: str, params: list[Any]) -> None:
    """``cursor.execute(sql, params)`` (Django's cursor, client-side binding: one simple-query
    message, several statements allowed) with the transaction's ``BEGIN`` in front of it when
    psycopg would send one first (``_begin_first``); the cursor is left on ``sql``'s first
    result either way."""
    begin = _begin_first(raw)
    if not begin or not _client_binding(cursor):
        cursor.execute(sql, params)
        return
    # psycopg's own ``BEGIN`` would go first unless it took the session for autocommit: it
    # does so for this one execution only, which opens the transaction itself; whatever
    # happens, psycopg is back out of autocommit, as Django's ``atomic`` set it.
    raw._autocommit = True
    try:
        cursor.execute(begin + sql, params)
    finally:
        raw._autocommit = False
    cursor.nextset()  # past BEGIN's own (empty) result


def binding_cursor(connection: Any) -> CursorWrapper:
    """A Django cursor on ``connection`` (PostgreSQL) that binds its parameters server-side and
    prepares each statement on its first execution on the underlying psycopg connection.

    Why: Django's psycopg cursor (``ClientCursor``) quotes every value into fresh SQL text, so
    PostgreSQL lexed, parsed and planned the hot path's statements -- the game's whole state
    JSON inlined in the write -- on every action, and the daphne's thread spent a share of its
    time quoting (bench/RESULTS.md, session 14's profile). Here the values travel as parameters
    of a statement PostgreSQL parsed and planned once per connection.

    The wrapper is Django's own (queries logged, execute wrappers run, errors turned into
    ``django.db`` errors). A prepared statement belongs to one PostgreSQL session: psycopg keeps
    the names per connection and forgets them when it sees them go (a ``ROLLBACK``, ``DISCARD
    ALL``, ``DEALLOCATE ALL``); a pooled connection given back keeps them, a new one starts
    without (tests/games/test_server_binding.py).
    """
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    with connection.wrap_database_errors:
        return connection._prepare_cursor(_new_binding_cursor(connection))


def _new_binding_cursor(connection: Any) -> Any:
    """``binding_cursor``'s psycopg cursor on ``connection``'s (connected) psycopg connection."""
    from django.db.backends.postgresql.base import ServerBindingCursor

    raw = connection.connection
    if raw.prepare_threshold is None:
        raw.prepare_threshold = _NEVER_BY_COUNT
    cursor = _preparing_cursor(ServerBindingCursor)(raw)
    timezone = connection.timezone
    loader = raw.adapters.get_loader(_TIMESTAMPTZ_OID, _TEXT)
    if timezone != loader.timezone:  # as Django's own ``create_cursor``
        from django.db.backends.postgresql.psycopg_any import register_tzloader

        register_tzloader(timezone, cursor)
    return cursor


#: Where ``kept_binding_cursor`` keeps its cursor: in the Django connection's own attributes
#: (one per thread, as Django's connections are).
_KEPT = "_crisp_kept_binding_cursor"


def kept_binding_cursor(connection: Any) -> CursorWrapper:
    """``binding_cursor``'s cursor, made once per underlying psycopg connection and used again:
    the caller neither closes it nor uses it in a ``with`` (it stays open with its connection).

    Why: making the cursor (psycopg's cursor and its adapters' transformer, Django's wrapper)
    was a tenth of ``ChangeWrite.write``'s own time, on every action (session 21's profile), and
    a fresh transformer looks every parameter type's dumper up again. Kept with the psycopg
    connection it was made on: a new connection (Django's reconnect, another one from the pool)
    gets a new cursor, and so does a change of Django's query logging (its debug wrapper, e.g.
    a test's ``CaptureQueriesContext``) or of the connection's time zone. Django's connections
    belong to one thread, so does the cursor. What a statement leaves in it (its result) stays
    until the next one.
    """
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    raw, logged, timezone = connection.connection, connection.queries_logged, connection.timezone
    kept = connection.__dict__.get(_KEPT)
    if kept is not None and kept[0] is raw and kept[1] == logged and kept[2] == timezone:
        connection.validate_thread_sharing()  # as ``_prepare_cursor`` does on every cursor
        if raw.prepare_threshold is None:  # turned off since (``bench/act_cpu.py --switch``)
            raw.prepare_threshold = _NEVER_BY_COUNT
        return kept[3]
    with connection.wrap_database_errors:
        wrapper = connection._prepare_cursor(_new_binding_cursor(connection))
    connection.__dict__[_KEPT] = (raw, logged, timezone, wrapper)
    return wrapper


_TIMESTAMPTZ_OID = 1184
_TEXT = 0  # psycopg.pq.Format.TEXT
_PREPARING: dict[type, type] = {}


def _preparing_cursor(base: type) -> type:
    """``base`` (Django's server-side binding psycopg cursor) with ``prepare=True`` by default,
    its statements' ``%s`` turned into ``$n`` once per process.

    Why the second: psycopg caches that conversion only for statements under 4 KB and 50
    parameters, and the change's write (``ChangeWrite``: its inserts and the seats' update in
    one statement) is longer: converted again on every action it cost the daphne's thread more
    than the binding saved (bench/results/session18-pgbind.md). The statements here are the
    hot path's few shapes, SQL written once per process.
    """
    found = _PREPARING.get(base)
    if found is None:
        from psycopg._queries import PostgresQuery, _query2pg_nocache

        class ConvertedOnce(PostgresQuery):
            __slots__ = ()

            def convert(self, query: Any, vars: Any) -> None:
                if vars is None or not isinstance(query, str | bytes):
                    return super().convert(query, vars)
                key = (query, self._tx.encoding)
                converted = _CONVERTED.get(key)
                if converted is None:
                    converted = _query2pg_nocache(self._ensure_bytes(query), self._tx.encoding)
                    if len(_CONVERTED) < _CONVERTED_MAX:
                        _CONVERTED[key] = converted
                self.query, self._want_formats, self._order, self._parts = converted
                self.dump(vars)
                return None

        class PreparingCursor(base):  # type: ignore[misc, valid-type]
            _query_cls = ConvertedOnce

            def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
                kwargs.setdefault("prepare", True)
                return super().execute(query, params, **kwargs)

        found = _PREPARING[base] = PreparingCursor
    return found


#: ``ConvertedOnce``'s statements (the hot path's shapes: a few dozen) and their bound.
_CONVERTED: dict[tuple[Any, str], Any] = {}
_CONVERTED_MAX = 512


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    key_at: tuple[int, ...]
    compiler: Any
    model: type[Model]
    init_list: list[str]
    start: int
    end: int
    populators: list[Any]
    for_update: bool
    #: ``annotate()``'s columns: attribute name -> position in the row (as ``ModelIterable``).
    annotations: tuple[tuple[str, int], ...]
    #: The row converters (the JSON columns' decoders, the datetimes', by position), worked
    #: out once: Django's ``results_iter`` looks them up again on every call, a third of what a
    #: warm read of a game row with its host still cost (bench/rest_cpu.py, session 16).
    converters: dict[int, Any]
    #: A composite key among the columns: rows go through ``results_iter`` as before.
    composite: bool
    #: The instances built without ``Model.__init__`` (``crisp_site.rows``, session 20); None
    #: where that would not be the same instance: ``from_db`` and Django's populators then.
    rows: Rows | None


class Prepared:
    """One ORM read, compiled once per database alias and run again with other keys.

    ``build(*keys)`` returns the queryset for ``keys``; it must put each key in the SQL exactly
    once (``filter(pk=key)``, ``filter(game_id=game, number=number)``). ``keys``: how many
    integer keys, or each key's type in order (``int`` or ``str``: ``(str,)`` for one string
    compared with ``=``, ``filter(key_hash=key)``; no string lookup that rewrites its value,
    such as ``contains`` or ``iexact``).
    """

    def __init__(
        self, build: Callable[..., QuerySet[Any]], keys: int | tuple[type, ...] = 1
    ) -> None:
        kinds = (int,) * keys if isinstance(keys, int) else tuple(keys)
        if any(k not in (int, str) for k in kinds):  # pragma: no cover - misuse
            raise TypeError("a prepared read's keys are integers or strings")
        self._build, self._keys, self._kinds = build, len(kinds), kinds
        self._compiled: dict[str, _Compiled] = {}
        self._lock = threading.Lock()

    def _compile(self, alias: str) -> _Compiled:
        found = self._compiled.get(alias)
        if found is not None:
            return found
        with self._lock:
            found = self._compiled.get(alias)
            if found is None:
                stand_ins = [
                    _STAND_IN - i if kind is int else f"{_STAND_IN_TEXT}{i}"
                    for i, kind in enumerate(self._kinds)
                ]
                queryset = self._build(*stand_ins)
                compiler = queryset.query.get_compiler(using=alias)
                sql, params = compiler.as_sql()
                params = tuple(params)
                if any(params.count(k) != 1 for k in stand_ins):  # pragma: no cover - misuse
                    raise ValueError("a prepared read takes each key exactly once")
                klass_info = compiler.klass_info
                fields = [s[0] for s in compiler.select[: compiler.col_count]]
                start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
                init_list = [f[0].target.attname for f in compiler.select[start:end]]
                populators = get_related_populators(klass_info, compiler.select, alias)
                found = _Compiled(
                    sql=sql,
                    params=params,
                    key_at=tuple(params.index(k) for k in stand_ins),
                    compiler=compiler,
                    model=klass_info["model"],
                    init_list=init_list,
                    start=start,
                    end=end,
                    populators=populators,
                    for_update=queryset.query.select_for_update,
                    annotations=tuple(compiler.annotation_col_map.items()),
                    converters=compiler.get_converters(fields),
                    composite=compiler.has_composite_fields(fields),
                    rows=rows_for(klass_info["model"], init_list, populators, alias),
                )
                self._compiled[alias] = found
        return found

    def fetch(self, *keys: Any, using: str = "default") -> list[Any]:
        """The instances the queryset for ``keys`` would give, in its order.

        Each integer key is checked as the ORM checks an integer column (``ValueError``/
        ``TypeError`` for what is not an integer; no row for one out of a 64-bit column's range);
        a string key must be a ``str`` (``TypeError``: the ORM would have compared ``str(key)``,
        or ``IS NULL`` for None, another statement).
        """
        statement = self._statement(keys, using)
        if statement is None:
            return []
        compiled, params = statement
        connection = connections[using]
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                _with_begin(cursor, connection.connection, compiled.sql, params)
            else:
                cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        return self._instances(compiled, rows, using)

    def _statement(self, keys: tuple[Any, ...], using: str) -> tuple[_Compiled, list[Any]] | None:
        """The SQL and parameters for ``keys``; None when no row can match (``fetch``)."""
        if len(keys) != self._keys:
            raise TypeError(f"this read takes {self._keys} keys")
        checked = []
        for key, kind in zip(keys, self._kinds, strict=True):
            if kind is str:
                if type(key) is not str:
                    raise TypeError("this read's key is a string")
            else:
                key = key if type(key) is int else int(key)
                if not _KEY_MIN <= key <= _KEY_MAX:
                    return None
            checked.append(key)
        keys = tuple(checked)
        compiled = self._compile(using)
        connection = connections[using]
        if (
            compiled.for_update
            and connection.features.has_select_for_update
            and connection.get_autocommit()
        ):
            # What the queryset itself refuses (where the database has row locks): a lock
            # that would end with its own statement.
            raise TransactionManagementError(
                "select_for_update cannot be used outside of a transaction."
            )
        params = list(compiled.params)
        for at, key in zip(compiled.key_at, keys, strict=True):
            params[at] = key
        return compiled, params

    @staticmethod
    def _instances(compiled: _Compiled, rows: list[Any], using: str) -> list[Any]:
        if not rows:
            return []
        compiler = compiled.compiler
        if compiled.composite:  # pragma: no cover - no such key in this project
            converted = compiler.results_iter(results=[rows])
        elif compiled.converters:
            converted = compiler.apply_converters(rows, compiled.converters)
        else:
            converted = rows
        start, end, annotations = compiled.start, compiled.end, compiled.annotations
        fast = compiled.rows
        out = []
        if fast is not None and fast.ready():
            make, populators = fast.make, fast.populators
            for row in converted:
                obj = make(row[start:end])
                for populator in populators:
                    populator.populate(row, obj)
                for name, at in annotations:
                    setattr(obj, name, row[at])
                out.append(obj)
            return out
        for row in converted:
            obj = compiled.model.from_db(using, compiled.init_list, row[start:end])
            for populator in compiled.populators:
                populator.populate(row, obj)
            for name, at in annotations:
                setattr(obj, name, row[at])
            out.append(obj)
        return out


def fetch_together(
    *reads: tuple[Prepared, tuple[Any, ...]], using: str = "default"
) -> list[list[Any]]:
    """Several prepared reads, in order, in ONE round trip where the driver allows it.

    Why: each statement of an action is a round trip on a daphne process's one database
    thread (bench/RESULTS.md, issue 25, session 14); the row lock and the seats' read need
    nothing from each other but their order. On PostgreSQL they go as one message and run one
    after the other in the transaction, so the second still reads under the lock the first
    took (each statement sees what was committed before it began, as two round trips would).

    With ``SERVER_BINDING`` (session 18), each is a statement prepared once per connection:
    the first time through psycopg's pipeline mode (bound server-side, prepared by psycopg,
    which keeps its names per connection and forgets them when the session loses them), then
    as ``EXECUTE name(key); EXECUTE name(key)`` in one message through Django's cursor -- the
    keys are integers and short strings, nothing to quote, and PostgreSQL parses and plans
    nothing but two short statements (the pipeline cost the daphne's thread more CPU than this
    message: bench/results/session18-pgbind.md). Without it, the statements' own SQL in one
    message (client-side binding, Django's default). Elsewhere (SQLite) they run one by one.
    Each read gives what its ``fetch`` gives, refusals included.

    On PostgreSQL, when they are the transaction's first statements (an action's, a timer's),
    its ``BEGIN`` goes in the same message (``_with_begin``, session 19): one round trip for
    ``BEGIN``, the lock and the seats, where psycopg sent ``BEGIN`` on its own first.
    """
    statements = [read._statement(keys, using) for read, keys in reads]
    connection = connections[using]
    together = connection.vendor == "postgresql" and all(s is not None for s in statements)
    if together and server_binding():
        connection.ensure_connection()
        names = _prepared_names(connection.connection, statements)  # type: ignore[arg-type]
        if names is None:  # not prepared on this connection (yet, or any more)
            return _pipelined(connection, statements, using)  # type: ignore[arg-type]
        with connection.cursor() as cursor:
            if _client_binding(cursor):
                _with_begin(
                    cursor,
                    connection.connection,
                    "; ".join(
                        f"EXECUTE {name}({', '.join(['%s'] * len(s[1]))})"  # type: ignore[index]
                        for name, s in zip(names, statements, strict=True)
                    ),
                    [p for s in statements for p in s[1]],  # type: ignore[index]
                )
                return _result_sets(cursor, statements, using)  # type: ignore[arg-type]
        return _pipelined(connection, statements, using)  # type: ignore[arg-type]
    if together:
        with connection.cursor() as cursor:
            together = _client_binding(cursor)
            if together:
                _with_begin(
                    cursor,
                    connection.connection,
                    "; ".join(s[0].sql for s in statements),  # type: ignore[index]
                    [p for s in statements for p in s[1]],  # type: ignore[index]
                )
                return _result_sets(cursor, statements, using)  # type: ignore[arg-type]
    out = []
    for statement in statements:
        if statement is None:
            out.append([])
            continue
        compiled, params = statement
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            out.append(Prepared._instances(compiled, cursor.fetchall(), using))
    return out


def _result_sets(
    cursor: CursorWrapper, statements: list[tuple[_Compiled, list[Any]]], using: str
) -> list[list[Any]]:
    """Each statement's instances from one message's result sets, in order."""
    results = []
    for i, (compiled, _) in enumerate(statements):
        if i:
            cursor.nextset()
        results.append(Prepared._instances(compiled, cursor.fetchall(), using))
    return results


def _client_binding(cursor: CursorWrapper) -> bool:
    """Whether Django's cursor binds client-side (psycopg's ``ClientCursor``, Django's default:
    several statements may go in one message)."""
    from psycopg import ClientCursor  # only on PostgreSQL, whose driver it is

    return isinstance(cursor.cursor, ClientCursor)


#: Each read's statement as psycopg keys its prepared statements (its SQL with ``$n``, its
#: parameters' types): the same in every connection, integers being bound as ``bigint``.
_KEYS: dict[str, Any] = {}


def _prepared_names(raw: Any, statements: list[tuple[_Compiled, list[Any]]]) -> list[str] | None:
    """The names of ``statements`` prepared on psycopg connection ``raw``, or None if one is
    not (psycopg drops its names on a rollback, ``DISCARD ALL``, ``DEALLOCATE ALL``; a new
    connection has none)."""
    manager = raw._prepared
    names = []
    for compiled, _ in statements:
        key = _KEYS.get(compiled.sql)
        name = manager._names.get(key) if key is not None else None
        if name is None:
            return None
        manager._names.move_to_end(key)  # used: psycopg keeps the most recently used
        names.append(name.decode())
    return names


def _pipelined(
    connection: Any, statements: list[tuple[_Compiled, list[Any]]], using: str
) -> list[list[Any]]:
    """``statements`` bound server-side and prepared (``binding_cursor``), in one psycopg
    pipeline: one sync, one round trip."""
    from psycopg.types.numeric import Int8

    cursors = [binding_cursor(connection) for _ in statements]
    bound = [[Int8(p) if type(p) is int else p for p in params] for _, params in statements]
    try:
        # Errors come at the pipeline's sync, outside the cursors' own wrapping.
        with connection.wrap_database_errors, connection.connection.pipeline():
            for cursor, (compiled, _), params in zip(cursors, statements, bound, strict=True):
                cursor.execute(compiled.sql, params)
        results = []
        manager = connection.connection._prepared
        for cursor, (compiled, _), params in zip(cursors, statements, bound, strict=True):
            if compiled.sql not in _KEYS:  # psycopg's key, as its ``execute`` made it
                key = manager.key(cursor.cursor._convert_query(compiled.sql, params))
                if key in manager._names:
                    _KEYS[compiled.sql] = key
            results.append(Prepared._instances(compiled, cursor.fetchall(), using))
        return results
    finally:
        for cursor in cursors:
            cursor.close()
