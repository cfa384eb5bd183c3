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
                )
                self._compiled[alias] = found
        return found

    def fetch(self, *keys: Any, using: str = "default") -> list[Any]:
        """The instances the queryset for ``keys`` would give, in its order.

        Each key is checked as the ORM checks an integer column (``ValueError``/``TypeError``
        for what is not an integer; no row for one out of a 64-bit column's range).
        """
        keys = tuple(k if type(k) is int else int(k) for k in keys)
        if len(keys) != self._keys:
            raise TypeError(f"this read takes {self._keys} keys")
        if not all(_KEY_MIN <= k <= _KEY_MAX for k in keys):
            return []
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
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        if not rows:
            return []
        out = []
        for row in compiled.compiler.results_iter(results=[rows]):
            obj = compiled.model.from_db(
                using, compiled.init_list, row[compiled.start : compiled.end]
            )
            for populator in compiled.populators:
                populator.populate(row, obj)
            out.append(obj)
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

    def save(self, obj: Model, using: str = "default") -> None:
        connection = connections[using]
        sql = self._sql.get(using)
        if sql is None:
            quote = connection.ops.quote_name
            sets = ", ".join(f"{quote(f.column)} = %s" for f in self._fields)
            pk = self._model._meta.pk
            sql = f"UPDATE {quote(self._model._meta.db_table)} SET {sets} WHERE {quote(pk.column)} = %s"  # noqa: E501, S608 - names from the model, values bound
            self._sql[using] = sql
        params = [f.get_db_prep_save(getattr(obj, f.attname), connection) for f in self._fields]
        params.append(obj.pk)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            updated = cursor.rowcount
        if updated != 1:
            raise DatabaseError("Save with update_fields did not affect any rows.")
