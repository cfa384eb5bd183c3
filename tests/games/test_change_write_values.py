"""The change's write binds what Django's own path binds (issue 25, session 21).

``games.services.prepared._converter`` takes the steps of ``field.get_db_prep_save`` at once for
the common values of the write's columns; ``crisp_site.prepared.kept_binding_cursor`` keeps the
write's cursor with its connection. These pin, on both backends, that every value the write
binds is the one (same type, same value) Django's ``get_db_prep_save`` gives, for the values
the shortcut takes and for those it hands back to Django; and on PostgreSQL, that the kept
cursor is used again, made anew on a new connection, and still logged when Django logs queries.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pytest
from django.db import connection
from django.db.models import Value
from django.db.models.fields.json import JSONField
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.functional import lazy

from crisp_site import prepared as binding
from games.models import EngineCall, Event, Game, Seat
from games.services import commit
from games.services.prepared import _converter, _insert_fields, _Values

_AWARE = datetime.datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=datetime.UTC)
_NAIVE = datetime.datetime(2026, 3, 1, 12, 30, 15, 123456)
_LAZY_TEXT = lazy(lambda: "lazy text", str)()

#: Values of every kind the write's columns see, and some they should never see.
_VALUES: list[Any] = [
    None,
    0,
    7,
    2**40,
    -3,
    True,
    False,
    1.5,
    decimal.Decimal("4"),
    "12",
    "",
    "text",
    Event.Origin.ENGINE,
    EngineCall.Call.APPLY,
    _LAZY_TEXT,
    {"a": [1, 2, {"b": None}]},
    [1, "x", None],
    _AWARE,
    timezone.now(),
    Value(None, output_field=JSONField()),
]


def _fields() -> list[Any]:
    """Every column the change's write binds."""
    return [
        *_insert_fields(EngineCall),
        *_insert_fields(Event),
        *(Game._meta.get_field(name) for name in commit._CHANGE_COLUMNS),
        *(Seat._meta.get_field(name) for name in commit._SEAT_WRITE_COLUMNS),
    ]


def _same(got: Any, want: Any) -> bool:
    """Whether two bound values are the same to the driver: type and value (a JSON wrapper's
    value and its dumps function; an expression: the same object)."""
    if type(got) is not type(want):
        return False
    if hasattr(want, "obj") and hasattr(want, "dumps"):  # psycopg's Json/Jsonb
        return bool(got.obj == want.obj and got.dumps is want.dumps)
    if hasattr(want, "as_sql"):
        return got is want
    return bool(got == want)


def _django(field: Any, value: Any) -> tuple[str, Any]:
    try:
        return "value", field.get_db_prep_save(value, connection)
    except Exception as error:  # what Django raises is what must be raised
        return "error", type(error)


def _ours(field: Any, value: Any) -> tuple[str, Any]:
    convert = _converter(field, type(connection.ops))
    try:
        return "value", convert(value, connection)
    except Exception as error:  # compared with Django's
        return "error", type(error)


@pytest.mark.django_db
@pytest.mark.filterwarnings("ignore:DateTimeField .* received a naive datetime")
def test_every_column_binds_what_djangos_get_db_prep_save_binds() -> None:
    differ = []
    for field in _fields():
        for value in [*_VALUES, _NAIVE]:
            want, got = _django(field, value), _ours(field, value)
            if want[0] != got[0] or not (
                _same(got[1], want[1]) if want[0] == "value" else got[1] is want[1]
            ):
                differ.append((field.model.__name__, field.name, repr(value), got, want))
    assert not differ, differ


def test_the_shortcut_is_taken_for_the_hot_columns() -> None:
    """The shortcut is there (not Django's bound method) for each column of the write but the
    datetimes on a backend that converts them (SQLite: its own path, not a hot one)."""
    ops = type(connection.ops)
    for field in _fields():
        convert = _converter(field, ops)
        slow = getattr(convert, "__self__", None) is field
        if field.get_internal_type() == "DateTimeField" and connection.vendor != "postgresql":
            assert slow, field
        else:
            assert not slow, field


@pytest.mark.django_db
def test_an_instances_values_are_its_fields_pre_save_then_get_db_prep_save() -> None:
    event = Event(
        game_id=3,
        round_id=None,
        seq=4,
        version=5,
        origin=Event.Origin.ENGINE,
        type="drawn",
        data={"seat": 1},
        created_at=_AWARE,
    )
    fields = _insert_fields(Event)
    want = [f.get_db_prep_save(f.pre_save(event, True), connection) for f in fields]
    got = _Values(fields, add=True).of(event, connection)
    assert len(got) == len(want)
    assert all(_same(g, w) for g, w in zip(got, want, strict=True)), (got, want)


# --- PostgreSQL: the kept cursor ------------------------------------------------------------


def _postgres() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the kept cursor binds server-side: PostgreSQL's")


@pytest.mark.django_db(transaction=True)
def test_the_kept_cursor_is_used_again_and_made_anew_on_a_new_connection() -> None:
    _postgres()
    first = binding.kept_binding_cursor(connection)
    assert binding.kept_binding_cursor(connection) is first
    first.execute("SELECT %s::int", [41])
    assert first.fetchone() == (41,)
    raw = first.cursor
    assert binding.kept_binding_cursor(connection).cursor is raw  # not closed by its use
    connection.close()
    again = binding.kept_binding_cursor(connection)
    assert again.cursor is not raw
    again.execute("SELECT %s::int", [42])
    assert again.fetchone() == (42,)


@pytest.mark.django_db
def test_the_kept_cursor_is_logged_when_django_logs_queries() -> None:
    _postgres()
    quiet = binding.kept_binding_cursor(connection)  # made while nothing logs queries
    with CaptureQueriesContext(connection) as queries:
        logged = binding.kept_binding_cursor(connection)
        logged.execute("SELECT %s::int", [43])
    assert logged is not quiet
    assert len(queries.captured_queries) == 1, queries.captured_queries


@pytest.mark.django_db
def test_the_kept_cursor_prepares_again_after_preparing_was_turned_off() -> None:
    """``bench/act_cpu.py --switch`` turns psycopg's preparing off between calls
    (``prepare_threshold = None``): the kept cursor's next statement is prepared all the same,
    as a new ``binding_cursor``'s would be."""
    _postgres()
    binding.kept_binding_cursor(connection)
    connection.connection.prepare_threshold = None
    cursor = binding.kept_binding_cursor(connection)
    cursor.execute("SELECT %s::int + 1000", [44])
    assert cursor.fetchone() == (1044,)
    with connection.cursor() as plain:
        plain.execute("SELECT statement FROM pg_prepared_statements")
        assert any("+ 1000" in row[0] for row in plain.fetchall())
