"""The writes of the commit's hot path, their SQL written once per process; and the compiled-once
reads (``crisp_site.prepared``, offered here too, where the game's services find them).
"""

from __future__ import annotations

import threading
from typing import Any

from django.db import DatabaseError, connections
from django.db.models import Model

from crisp_site import prepared as _binding
from crisp_site.prepared import Prepared, fetch_together

__all__ = ["ChangeWrite", "Prepared", "PreparedUpdate", "fetch_together"]


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

    On PostgreSQL the statement is bound server-side and prepared once per connection and shape
    (``crisp_site.prepared.binding_cursor``). Values go through each field's own
    ``get_db_prep_save`` (``pre_save(add=True)`` for the inserts), as the ORM's; the events
    get their keys (``RETURNING``), as ``bulk_create`` gave them; a game row that is gone
    fails as ``save(update_fields=...)`` did.
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
        # PostgreSQL: the values as parameters of a statement prepared once per connection and
        # shape (``crisp_site.prepared.binding_cursor``), not quoted into fresh SQL text -- the
        # state's JSON and the events' were most of that text.
        bound = connection.vendor == "postgresql" and _binding.server_binding()
        with _binding.binding_cursor(connection) if bound else connection.cursor() as cursor:
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
