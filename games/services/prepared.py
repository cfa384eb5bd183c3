"""ORM reads of the commit's hot path, compiled to SQL once per process instead of per call.

Why: most of what a locking read or the seats' read cost a daphne process was Django building
the SQL (``names_to_path``, ``add_q``, ``as_sql``) for a statement that never changes but for
its key -- ~0.4 ms for the row lock and ~0.7 ms for the seats against ~0.07 ms each through a
cursor (bench/RESULTS.md, "Scale", sessions 4 and 8). A ``Prepared`` read is the same ORM
query, compiled once per database alias with a stand-in key; each call runs that SQL with the
real key and builds the instances with Django's own converters and ``select_related``
populators, so what the service layer gets is what the queryset would have given (deferred
columns included: they load on access, as with ``.only()``).

Only for reads whose SQL depends on nothing but their integer keys (the game's primary key, a
round's number).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, connections
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators
from django.db.transaction import TransactionManagementError

#: The stand-in keys the SQL is compiled with (found again in its parameters, then replaced):
#: within every integer column's range, or the ORM would compile "no rows" instead.
_STAND_IN = 30_011
#: The range of a 64-bit key column: the ORM turns a key outside it into "no row" (Django
#: 5.0+); a cursor would raise an error from the database instead.
_KEY_MIN, _KEY_MAX = -(2**63), 2**63 - 1


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


class Prepared:
    """One ORM read, compiled once per database alias and run again with other keys.

    ``build(*keys)`` returns the queryset for ``keys`` (integers); it must put each key in the
    SQL exactly once (``filter(pk=key)``, ``filter(game_id=game, number=number)``).
    """

    def __init__(self, build: Callable[..., QuerySet[Any]], keys: int = 1) -> None:
        self._build, self._keys = build, keys
        self._compiled: dict[str, _Compiled] = {}
        self._lock = threading.Lock()

    def _compile(self, alias: str) -> _Compiled:
        found = self._compiled.get(alias)
        if found is not None:
            return found
        with self._lock:
            found = self._compiled.get(alias)
            if found is None:
                stand_ins = [_STAND_IN - i for i in range(self._keys)]
                queryset = self._build(*stand_ins)
                compiler = queryset.query.get_compiler(using=alias)
                sql, params = compiler.as_sql()
                params = tuple(params)
                if any(params.count(k) != 1 for k in stand_ins):  # pragma: no cover - misuse
                    raise ValueError("a prepared read takes each key exactly once")
                klass_info = compiler.klass_info
                fields = [s[0] for s in compiler.select[: compiler.col_count]]
                start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
                found = _Compiled(
                    sql=sql,
                    params=params,
                    key_at=tuple(params.index(k) for k in stand_ins),
                    compiler=compiler,
                    model=klass_info["model"],
                    init_list=[f[0].target.attname for f in compiler.select[start:end]],
                    start=start,
                    end=end,
                    populators=get_related_populators(klass_info, compiler.select, alias),
                    for_update=queryset.query.select_for_update,
                    annotations=tuple(compiler.annotation_col_map.items()),
                    converters=compiler.get_converters(fields),
                    composite=compiler.has_composite_fields(fields),
                )
                self._compiled[alias] = found
        return found

    def fetch(self, *keys: Any, using: str = "default") -> list[Any]:
        """The instances the queryset for ``keys`` would give, in its order.

        Each key is checked as the ORM checks an integer column (``ValueError``/``TypeError``
        for what is not an integer; no row for one out of a 64-bit column's range).
        """
        statement = self._statement(keys, using)
        if statement is None:
            return []
        compiled, params = statement
        with connections[using].cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        return self._instances(compiled, rows, using)

    def _statement(self, keys: tuple[Any, ...], using: str) -> tuple[_Compiled, list[Any]] | None:
        """The SQL and parameters for ``keys``; None when no row can match (``fetch``)."""
        keys = tuple(k if type(k) is int else int(k) for k in keys)
        if len(keys) != self._keys:
            raise TypeError(f"this read takes {self._keys} keys")
        if not all(_KEY_MIN <= k <= _KEY_MAX for k in keys):
            return None
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
        out = []
        for row in converted:
            obj = compiled.model.from_db(
                using, compiled.init_list, row[compiled.start : compiled.end]
            )
            for populator in compiled.populators:
                populator.populate(row, obj)
            for name, at in compiled.annotations:
                setattr(obj, name, row[at])
            out.append(obj)
        return out


def fetch_together(
    *reads: tuple[Prepared, tuple[Any, ...]], using: str = "default"
) -> list[list[Any]]:
    """Several prepared reads, in order, in ONE round trip where the driver allows it.

    Why: each statement of an action is a round trip on a daphne process's one database
    thread (bench/RESULTS.md, issue 25, session 14); the row lock and the seats' read need
    nothing from each other but their order. On PostgreSQL through psycopg's client-side
    binding cursor (Django's default) the statements go as one message and run one after the
    other in the transaction, so the second still reads under the lock the first took (each
    statement sees what was committed before it began, as two round trips would). Elsewhere
    (SQLite, a server-side binding cursor) they run one by one. Each read gives what its
    ``fetch`` gives, refusals included.
    """
    statements = [read._statement(keys, using) for read, keys in reads]
    connection = connections[using]
    together = connection.vendor == "postgresql" and all(s is not None for s in statements)
    if together:
        from psycopg import ClientCursor  # only on PostgreSQL, whose driver it is

        with connection.cursor() as cursor:
            together = isinstance(cursor.cursor, ClientCursor)
            if together:
                cursor.execute(
                    "; ".join(s[0].sql for s in statements),  # type: ignore[index]
                    [p for s in statements for p in s[1]],  # type: ignore[index]
                )
                results = []
                for i, statement in enumerate(statements):
                    if i:
                        cursor.nextset()
                    results.append(Prepared._instances(statement[0], cursor.fetchall(), using))  # type: ignore[index]
                return results
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


class PreparedUpdate:
    """``obj.save(update_fields=columns)`` of one model, its SQL written once per alias.

    Why: the row's ``UPDATE`` of every change went through ``save()``, which builds an update
    query per call (``save_base``, ``_do_update``, the compiler): about a tenth of a daphne's
    CPU per action (bench/RESULTS.md, session 8). For a model with no ``pre_save`` behaviour
    on those columns (no ``auto_now``) and no signal receivers depending on them, this writes
    the same values (each field's own ``get_db_prep_save``) to the same row, and fails as
    ``save(update_fields=...)`` fails when the row is gone.
    """

    def __init__(self, model: type[Model], columns: tuple[str, ...]) -> None:
        self._model = model
        self._fields = [model._meta.get_field(name) for name in columns]
        for field in self._fields:  # what `save()` would do and this does not
            if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
                raise ValueError(f"{field.name} changes itself on save: save() it")
        self._sql: dict[str, str] = {}

    def sql(self, connection: Any) -> str:
        """The statement, ``%s`` for the columns' values then the key (``params``)."""
        sql = self._sql.get(connection.alias)
        if sql is None:
            quote = connection.ops.quote_name
            sets = ", ".join(f"{quote(f.column)} = %s" for f in self._fields)
            pk = self._model._meta.pk
            sql = f"UPDATE {quote(self._model._meta.db_table)} SET {sets} WHERE {quote(pk.column)} = %s"  # noqa: E501, S608 - names from the model, values bound
            self._sql[connection.alias] = sql
        return sql

    def params(self, obj: Model, connection: Any) -> list[Any]:
        params = [f.get_db_prep_save(getattr(obj, f.attname), connection) for f in self._fields]
        params.append(obj.pk)
        return params

    def save(self, obj: Model, using: str = "default") -> None:
        connection = connections[using]
        with connection.cursor() as cursor:
            cursor.execute(self.sql(connection), self.params(obj, connection))
            updated = cursor.rowcount
        if updated != 1:
            raise DatabaseError("Save with update_fields did not affect any rows.")


def _insert_fields(model: type[Model]) -> list[Any]:
    """The columns an ``INSERT`` of ``model`` writes: every concrete one but its generated key."""
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    for field in fields:  # what `save()` would do and this does not (bar `default`, applied
        # when the instance is made)
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            raise ValueError(f"{field.name} changes itself on save: save() it")
    return fields


class ChangeWrite:
    """Every write of one change of a game in play, its SQL written once per alias and shape.

    Why: after the compiled-once reads, an action still paid the ORM for building its
    ``INSERT`` of the ``EngineCall`` row, the ``bulk_create`` of its events and the ``CASE``
    ``UPDATE`` of the seats whose turn changed, and each was a round trip of its own on the
    daphne's one database thread (bench/RESULTS.md, issue 25, session 14). Here they are

    - on PostgreSQL **one statement**: the inserts and the seats' update as data-modifying
      ``WITH`` clauses of the game row's ``UPDATE`` (each runs exactly once, whether or not
      the main statement reads it; they touch other tables than the game row, and the
      foreign keys are checked at commit, as Django declares them deferred);
    - elsewhere (SQLite, in process: no round trip to save) the same statements one after
      the other.

    Values go through each field's own ``get_db_prep_save`` (``pre_save(add=True)`` for the
    inserts), as the ORM's; the events get their keys (``RETURNING``), as ``bulk_create``
    gave them; a game row that is gone fails as ``save(update_fields=...)`` did.
    """

    def __init__(
        self,
        call_model: type[Model],
        event_model: type[Model],
        row: PreparedUpdate,
        seat_model: type[Model],
        seat_columns: tuple[str, ...],
        keep_when_none: tuple[str, ...] = (),
    ) -> None:
        self._call_model, self._event_model = call_model, event_model
        #: Seat columns (NOT NULL ones) whose value None means "leave it as it is": a seat
        #: written for its turn keeps its count, one written for its count keeps nothing else.
        self._keep = frozenset(keep_when_none)
        self._call_fields = _insert_fields(call_model)
        self._event_fields = _insert_fields(event_model)
        self._row = row
        self._seat_model = seat_model
        self._seat_fields = [seat_model._meta.get_field(name) for name in seat_columns]
        self._sql: dict[tuple[str, bool, int, int], tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def _statements(self, connection: Any, call: bool, events: int, seats: int) -> tuple[str, ...]:
        key = (connection.alias, call, events, seats)
        found = self._sql.get(key)
        if found is not None:
            return found
        quote = connection.ops.quote_name
        postgres = connection.vendor == "postgresql"

        def insert(model: type[Model], fields: list[Any], rows: int, returning: bool) -> str:
            columns = ", ".join(quote(f.column) for f in fields)
            one = "(" + ", ".join(["%s"] * len(fields)) + ")"
            sql = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES " + ", ".join(  # noqa: S608 - names from the model, values bound
                [one] * rows
            )
            if returning:
                pk = quote(model._meta.pk.column)
                sql += f" RETURNING {pk}" + (f", {quote('seq')}" if postgres else "")
            return sql

        parts: list[str] = []
        if call:
            parts.append(insert(self._call_model, self._call_fields, 1, False))
        if events:
            parts.append(insert(self._event_model, self._event_fields, events, True))
        if seats:
            pk = quote(self._seat_model._meta.pk.column)

            # A CASE of bare NULLs is ``text`` to PostgreSQL, which no timestamp takes: cast.
            def value(field: Any) -> str:
                return f"CAST(%s AS {field.db_type(connection)})" if postgres else "%s"

            def case(field: Any) -> str:
                sql = f"CASE {pk} " + " ".join([f"WHEN %s THEN {value(field)}"] * seats) + " END"
                if field.name in self._keep:
                    return f"COALESCE({sql}, {quote(field.column)})"
                return sql

            sets = ", ".join(f"{quote(f.column)} = {case(f)}" for f in self._seat_fields)
            keys = ", ".join(["%s"] * seats)
            parts.append(
                f"UPDATE {quote(self._seat_model._meta.db_table)} SET {sets} WHERE {pk} IN ({keys})"  # noqa: S608 - names from the model, values bound
            )
        row = self._row.sql(connection)
        if not postgres:
            found = (*parts, row)
        else:
            names = []
            if call:
                names.append("call_row")
            if events:
                names.append("event_rows")
            if seats:
                names.append("seat_turns")
            with_ = ", ".join(f"{n} AS ({p})" for n, p in zip(names, parts, strict=True))
            seq = quote("seq")
            returning = (
                f" RETURNING (SELECT array_agg({quote('id')} ORDER BY {seq}) FROM event_rows)"  # noqa: S608 - names only
                if events
                else ""
            )
            found = ((f"WITH {with_} " if with_ else "") + row + returning,)
        with self._lock:
            self._sql[key] = found
        return found

    def write(
        self,
        game: Model,
        call: Model | None,
        events: list[Model],
        seats: dict[int, tuple[Any, ...]],
        using: str = "default",
    ) -> None:
        """Insert ``call`` and ``events``, update ``game``'s columns, and each seat key's
        columns to its values in ``seats``."""
        connection = connections[using]
        statements = self._statements(connection, call is not None, len(events), len(seats))

        def values(obj: Model, fields: list[Any]) -> list[Any]:
            return [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]

        params: list[list[Any]] = []
        if call is not None:
            params.append(values(call, self._call_fields))
        if events:
            params.append([v for ev in events for v in values(ev, self._event_fields)])
        if seats:
            seat_params: list[Any] = []
            for i, field in enumerate(self._seat_fields):
                for pk, columns in seats.items():
                    seat_params += [pk, field.get_db_prep_save(columns[i], connection)]
            seat_params += list(seats)
            params.append(seat_params)
        params.append(self._row.params(game, connection))
        with connection.cursor() as cursor:
            if len(statements) == 1:  # PostgreSQL: always one statement, one round trip
                cursor.execute(statements[0], [v for p in params for v in p])
                updated = cursor.rowcount
                ids = cursor.fetchone()[0] if events and updated == 1 else []
            else:
                ids, updated = [], 0
                for sql, values_ in zip(statements, params, strict=True):
                    cursor.execute(sql, values_)
                    if sql.startswith("INSERT") and "RETURNING" in sql:
                        ids = [r[0] for r in cursor.fetchall()]
                    elif sql is statements[-1]:
                        updated = cursor.rowcount
        if updated != 1:
            raise DatabaseError("Save with update_fields did not affect any rows.")
        for ev, pk in zip(events, ids, strict=True):
            ev.pk = pk
            ev._state.adding, ev._state.db = False, using
