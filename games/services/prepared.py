"""The writes of the commit's hot path, their SQL written once per process; and the compiled-once
reads (``crisp_site.prepared``, offered here too, where the game's services find them).
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from django.db import DatabaseError, connections
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.models import Model, fields
from django.db.models.fields.json import JSONField
from django.db.models.fields.related import ForeignKey
from django.utils.functional import Promise

from crisp_site import prepared as _binding
from crisp_site.prepared import Prepared, fetch_together

__all__ = ["ChangeWrite", "Prepared", "PreparedUpdate", "fetch_together"]


#: What ``field.get_db_prep_save(value, connection)`` is, worked out once per field and
#: database: ``converter(value, connection)``.
Converter = Callable[[Any, Any], Any]
#: The JSON values Django's ``JSONField`` hands to ``ops.adapt_json_value`` unchanged.
_JSON_PLAIN = frozenset({dict, list, str, int, float, bool})


def _converter(field: Any, ops: type[BaseDatabaseOperations]) -> Converter:
    """``field.get_db_prep_save`` for a database whose operations class is ``ops``, with the
    steps Django's own methods take for the common values taken at once.

    Why: Django's path is four to six calls per value (``get_db_prep_save``,
    ``get_db_prep_value``, ``get_prep_value``, ``to_python``, the backend's ``adapt_*``), and
    a change's write binds some sixty values: about a fifth of ``ChangeWrite.write``'s own time
    (session 21's profile). The shortcut is taken only where the field's methods ARE Django's
    (checked here, by identity: a subclass overriding any of them gets Django's path), and
    only for the value types for which those methods' code returns, step by step:

    - integer columns: an ``int`` as it is, wrapped as the backend wraps it (PostgreSQL:
      ``Int2``/``Int4``/``Int8``); None as None;
    - an auto key (a foreign key's target): an ``int`` or None as it is;
    - a foreign key: None as None, an ``int`` as its target's;
    - text: any ``str`` (not a lazy translation) as it is; None as None;
    - datetimes where the backend takes them as they are (PostgreSQL): an aware ``datetime``
      as it is; None as None;
    - JSON: None as None (SQL ``NULL``); a plain ``dict``/``list``/``str``/number/bool as
      ``ops.adapt_json_value(value, encoder)`` (looked up per call: ``crisp_site.fastjson``
      switches it);

    everything else (a naive datetime, an expression, a ``Value``, a ``Decimal``...) through
    ``field.get_db_prep_save``. tests/games/test_change_write_values.py compares both.
    """
    slow: Converter = field.get_db_prep_save
    cls = type(field)
    saves_plainly = cls.get_db_prep_save is fields.Field.get_db_prep_save
    if (
        saves_plainly
        and cls.get_db_prep_value is fields.IntegerField.get_db_prep_value
        and cls.get_prep_value is fields.IntegerField.get_prep_value
    ):
        adapt = ops.adapt_integerfield_value
        if adapt is BaseDatabaseOperations.adapt_integerfield_value:
            wrap = None
        else:
            from django.db.backends.postgresql.operations import DatabaseOperations as Pg

            if adapt is not Pg.adapt_integerfield_value:  # another backend's: its own path
                return slow
            wrap = Pg.integerfield_type_map[field.get_internal_type()]

        def integer(value: Any, connection: Any) -> Any:
            if type(value) is int:
                return value if wrap is None else wrap(value)
            if value is None:
                return None
            return slow(value, connection)

        return integer
    if (
        saves_plainly
        and cls.get_db_prep_value is fields.AutoFieldMixin.get_db_prep_value
        and cls.get_prep_value is fields.IntegerField.get_prep_value
        and ops.validate_autopk_value is BaseDatabaseOperations.validate_autopk_value
    ):

        def auto(value: Any, connection: Any) -> Any:
            if type(value) is int or value is None:
                return value
            return slow(value, connection)

        return auto
    if cls.get_db_prep_save is ForeignKey.get_db_prep_save:
        target = _converter(field.target_field, ops)

        def foreign_key(value: Any, connection: Any) -> Any:
            if value is None:
                return None
            if type(value) is int:
                return target(value, connection)
            return slow(value, connection)

        return foreign_key
    if (
        saves_plainly
        and cls.get_db_prep_value is fields.Field.get_db_prep_value
        and cls.get_prep_value in (fields.CharField.get_prep_value, fields.TextField.get_prep_value)
        and cls.to_python in (fields.CharField.to_python, fields.TextField.to_python)
    ):

        def text(value: Any, connection: Any) -> Any:
            if (isinstance(value, str) and not isinstance(value, Promise)) or value is None:
                return value
            return slow(value, connection)

        return text
    if (
        saves_plainly
        and cls.get_db_prep_value is fields.DateTimeField.get_db_prep_value
        and cls.get_prep_value is fields.DateTimeField.get_prep_value
        and cls.to_python is fields.DateTimeField.to_python
        and _takes_datetimes_as_they_are(ops)
    ):
        aware = datetime.datetime

        def timestamp(value: Any, connection: Any) -> Any:
            if value is None or (type(value) is aware and value.utcoffset() is not None):
                return value
            return slow(value, connection)

        return timestamp
    if (
        cls.get_db_prep_save is JSONField.get_db_prep_save
        and cls.get_db_prep_value is JSONField.get_db_prep_value
        and cls.get_prep_value is fields.Field.get_prep_value
    ):
        encoder = field.encoder

        def json_value(value: Any, connection: Any) -> Any:
            if value is None:
                return None
            if type(value) in _JSON_PLAIN:
                return connection.ops.adapt_json_value(value, encoder)
            return slow(value, connection)

        return json_value
    return slow


def _takes_datetimes_as_they_are(ops: type[BaseDatabaseOperations]) -> bool:
    """Whether ``ops.adapt_datetimefield_value`` is PostgreSQL's (the value as it is)."""
    try:
        from django.db.backends.postgresql.operations import DatabaseOperations as Pg
    except ImportError:  # pragma: no cover - no PostgreSQL driver
        return False
    return ops.adapt_datetimefield_value is Pg.adapt_datetimefield_value


class _Values:
    """Each of a model's instances' values for ``fields`` as ``INSERT``/``UPDATE`` binds them:
    ``pre_save(obj, add)`` (``add=None``: the attribute itself) then ``get_db_prep_save``, per
    field, in order (``_converter``), read together (``attrgetter``) where every field's
    ``pre_save`` is the plain attribute."""

    def __init__(self, model_fields: list[Any], add: bool | None) -> None:
        self._fields = model_fields
        self._add = add
        plain = add is None or all(  # None: the attributes as they are (no ``pre_save``)
            type(f).pre_save is fields.Field.pre_save
            or (
                type(f).pre_save in (fields.DateTimeField.pre_save, fields.DateField.pre_save)
                and not f.auto_now
                and not (f.auto_now_add and add)
            )
            for f in model_fields
        )
        names = [f.attname for f in model_fields]
        self._get: Callable[[Model], tuple[Any, ...]] | None = None
        if plain and len(names) > 1:
            self._get = attrgetter(*names)
        elif plain and names:
            one = attrgetter(names[0])
            self._get = lambda obj: (one(obj),)
        self._converters: dict[str, list[Converter]] = {}

    def converters(self, connection: Any) -> list[Converter]:
        found = self._converters.get(connection.alias)
        if found is None:
            ops = type(connection.ops)
            found = self._converters[connection.alias] = [_converter(f, ops) for f in self._fields]
        return found

    def of(self, obj: Model, connection: Any) -> list[Any]:
        converters = self.converters(connection)
        if self._get is not None:
            raw = self._get(obj)
        else:
            raw = tuple(f.pre_save(obj, bool(self._add)) for f in self._fields)
        return [convert(v, connection) for convert, v in zip(converters, raw, strict=True)]


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
        self._values = _Values(self._fields, add=None)

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
        params = self._values.of(obj, connection)
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
        self._call_values = _Values(self._call_fields, add=True)
        self._event_values = _Values(self._event_fields, add=True)
        self._row = row
        self._seat_model = seat_model
        self._seat_fields = [seat_model._meta.get_field(name) for name in seat_columns]
        self._seat_values = _Values(self._seat_fields, add=None)
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

        params: list[list[Any]] = []
        if call is not None:
            params.append(self._call_values.of(call, connection))
        if events:
            of = self._event_values.of
            params.append([v for ev in events for v in of(ev, connection)])
        if seats:
            seat_params: list[Any] = []
            for i, convert in enumerate(self._seat_values.converters(connection)):
                for pk, columns in seats.items():
                    seat_params += [pk, convert(columns[i], connection)]
            seat_params += list(seats)
            params.append(seat_params)
        params.append(self._row.params(game, connection))
        # PostgreSQL: the values as parameters of a statement prepared once per connection and
        # shape (``crisp_site.prepared.kept_binding_cursor``: kept with the connection, not
        # closed here), not quoted into fresh SQL text -- the state's JSON and the events'
        # were most of that text.
        if connection.vendor == "postgresql" and _binding.server_binding():
            cursor = _binding.kept_binding_cursor(connection)
            ids, updated = self._run(cursor, statements, params, bool(events))
        else:
            with connection.cursor() as cursor:
                ids, updated = self._run(cursor, statements, params, bool(events))
        if updated != 1:
            raise DatabaseError("Save with update_fields did not affect any rows.")
        for ev, pk in zip(events, ids, strict=True):
            ev.pk = pk
            ev._state.adding, ev._state.db = False, using

    @staticmethod
    def _run(
        cursor: Any, statements: tuple[str, ...], params: list[list[Any]], events: bool
    ) -> tuple[list[Any], int]:
        """Run ``write``'s statements: the events' keys (if ``events``), the game row's count."""
        if len(statements) == 1:  # PostgreSQL: always one statement, one round trip
            cursor.execute(statements[0], [v for p in params for v in p])
            updated = cursor.rowcount
            return (cursor.fetchone()[0] if events and updated == 1 else []), updated
        ids, updated = [], 0
        for sql, values in zip(statements, params, strict=True):
            cursor.execute(sql, values)
            if sql.startswith("INSERT") and "RETURNING" in sql:
                ids = [r[0] for r in cursor.fetchall()]
            elif sql is statements[-1]:
                updated = cursor.rowcount
        return ids, updated
