"""The model instances of the compiled reads (``crisp_site.prepared``), built without Django's
generic ``Model.__init__`` where that is provably the same instance.

Why: an action's lock + seats read builds the game row (every column) and its four seats with
their users (``select_related``, some columns) through ``Model.from_db``, which pads the values
with ``DEFERRED`` placeholders and calls ``Model.__init__``: a loop over every concrete field,
``setattr`` through each field's descriptor, two signals sent. In a py-spy profile of the
daphne at 100 tables that ``__init__`` was the largest self entry after JSON encoding (4.7 % of
the process's GIL samples; bench/results/session20-rows.md).

What ``from_db`` leaves for a read of ``names`` (the model's columns read, in the order of its
concrete fields) is an instance whose ``__dict__`` holds ``_state`` and each read column's
value under its attname, and nothing else: a deferred column is simply absent (Django's own
test for "deferred", ``get_deferred_fields``, and what loads it on access); ``_state`` is a
fresh ``ModelState`` with ``adding`` False and ``db`` the alias. Here that dictionary is
written directly. Only where it is the same:

- the model's class makes instances as ``Model`` does (no ``__new__``, ``__init__``,
  ``__setattr__``, ``from_db`` of its own, nor a metaclass ``__call__``);
- each column read is stored by a descriptor that writes nothing but ``__dict__[attname]`` on
  a fresh instance (Django's ``DeferredAttribute`` and ``ForeignKeyDeferredAttribute``: the
  latter drops a cached related object, and a fresh instance has none);
- the columns come in the concrete fields' order (``from_db`` assigns them in that order);
- no ``pre_init`` or ``post_init`` receiver for the model: checked on every read
  (``Rows.ready``, a look-up in the signals' own per-sender cache), else ``from_db``.

``ModelState.fields_cache`` (the related objects' cache, which Django's descriptor creates on
first access) is made with the state: ``ForeignKeyDeferredAttribute`` creates it anyway for
any foreign key read, and ``select_related`` fills it.

The write side (session 21): ``loaded`` (``from_db`` of values a change already has: the
round of the lock, the broadcast's copy of the game, the ack's game) and ``unsaved``
(``Model(*values)``, one value per column: an event row, an engine call row) build the same
way, under the same checks, and leave ``_state``'s own attributes exactly as Django does
(``fields_cache`` only where a foreign key's descriptor made it; an unsaved row's ``adding`` and
``db`` the class's). ``WRITES`` is their switch.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from django.db.models import Model
from django.db.models.base import ModelBase, ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.query import RelatedPopulator
from django.db.models.query_utils import DeferredAttribute
from django.db.models.signals import post_init, pre_init
from django.dispatch.dispatcher import NO_RECEIVERS

#: Build the compiled reads' instances directly (``Rows``). False: ``Model.from_db``, as
#: before -- the switch the benches' in-process A/B flips (bench/rows_cpu.py).
FAST = True
#: Build the write side's instances directly (``loaded``, ``unsaved``: the service layer's
#: rows of a change, the ack's game). False: ``Model.from_db`` and ``Model(*values)``, as
#: before -- the switch of bench/rows2_cpu.py's in-process A/B.
WRITES = True

#: The descriptors that store a column on a fresh instance as a plain ``__dict__`` write.
_PLAIN_STORES = (DeferredAttribute, ForeignKeyDeferredAttribute)

_new = object.__new__


def _constructed_as_model(model: type[Model]) -> bool:
    """Whether ``model`` makes its instances exactly as ``Model`` does (``from_db``)."""
    return (
        type(model).__call__ is ModelBase.__call__
        and model.__new__ is Model.__new__
        and model.__init__ is Model.__init__
        and model.__setattr__ is Model.__setattr__
        and getattr(model.from_db, "__func__", None) is Model.from_db.__func__  # type: ignore[attr-defined]
        and not model._meta.abstract
    )


def _stored_plainly(model: type[Model], names: Sequence[str]) -> bool:
    """Whether ``names`` are the model's concrete fields' attnames, in their order, each kept
    by a descriptor that only writes ``__dict__`` on a fresh instance."""
    attnames = [f.attname for f in model._meta.concrete_fields]
    at = [attnames.index(n) if n in attnames else -1 for n in names]
    if -1 in at or at != sorted(at) or len(set(at)) != len(at):
        return False
    # ``type(descriptor) in``, not ``isinstance``: a subclass may store otherwise.
    return all(type(inspect.getattr_static(model, n, None)) in _PLAIN_STORES for n in names)


def _quiet(model: type[Model]) -> bool:
    """No ``pre_init``/``post_init`` receiver for ``model`` (what ``Model.__init__`` sends):
    the signals' own early exit (``Signal.send``), else their own look-up, which fills that
    per-sender cache for the next call."""
    for signal in (pre_init, post_init):
        if (
            signal.receivers
            and signal.sender_receivers_cache.get(model) is not NO_RECEIVERS
            and signal.has_listeners(model)
        ):
            return False
    return True


def maker(model: type[Model], names: Sequence[str], db: str) -> Callable[[Sequence[Any]], Any]:
    """A function of one row's values for ``names`` (``from_db``'s ``values``) giving the
    instance ``model.from_db(db, names, values)`` would give; the caller has checked
    ``eligible(model, names)`` and, for this read, ``Rows.ready``."""
    names = tuple(names)

    def make(values: Sequence[Any]) -> Any:
        state = _new(ModelState)
        state.__dict__.update(fields_cache={}, adding=False, db=db)
        obj = _new(model)
        attrs = obj.__dict__
        attrs["_state"] = state
        attrs.update(zip(names, values))  # noqa: B905 - from_db's values are names' length
        return obj

    return make


def eligible(model: type[Model], names: Sequence[str]) -> bool:
    """Whether ``maker`` builds ``model``'s instances from ``names`` as ``from_db`` would (but
    for the signals, checked on every read)."""
    return _constructed_as_model(model) and _stored_plainly(model, names)


class _Related:
    """Django's ``RelatedPopulator`` (``select_related``: one joined model's columns of each
    row, its own joins, the two cached relations) with its instance built by ``maker``."""

    __slots__ = ("end", "local_setter", "make", "pk_idx", "related", "remote_setter", "start")

    def __init__(self, django: RelatedPopulator, related: list[Any]) -> None:
        self.start, self.end, self.pk_idx = django.cols_start, django.cols_end, django.pk_idx
        self.make = maker(django.model_cls, django.init_list, django.db)
        self.related = related
        self.local_setter, self.remote_setter = django.local_setter, django.remote_setter

    def populate(self, row: Sequence[Any], from_obj: Any) -> None:
        data = row[self.start : self.end]
        if data[self.pk_idx] is None:
            obj = None
        else:
            obj = self.make(data)
            for populator in self.related:
                populator.populate(row, obj)
        self.local_setter(from_obj, obj)
        if obj is not None:
            self.remote_setter(obj, from_obj)


def _fast_populators(populators: list[Any], models: list[type[Model]]) -> list[_Related] | None:
    """``populators`` (Django's) as ``_Related``, each model built appended to ``models``; None
    when one of them is not ``eligible`` (or a multi-table parent's, reordered)."""
    out = []
    for django in populators:
        if (
            type(django) is not RelatedPopulator
            or django.reorder_for_init is not None
            or not eligible(django.model_cls, django.init_list)
        ):
            return None
        related = _fast_populators(django.related_populators, models)
        if related is None:
            return None
        models.append(django.model_cls)
        out.append(_Related(django, related))
    return out


class Rows:
    """How one compiled read's rows become instances without ``Model.__init__``: ``make``
    for the read's own model, ``populators`` for its ``select_related`` models."""

    __slots__ = ("make", "models", "populators")

    def __init__(
        self, make: Callable[[Sequence[Any]], Any], populators: list[Any], models: tuple[Any, ...]
    ) -> None:
        self.make, self.populators, self.models = make, populators, models

    def ready(self) -> bool:
        """Whether to build this read's instances here now: the switch on and no model of it
        with a ``pre_init``/``post_init`` receiver (connected since it was compiled, say)."""
        if not FAST:
            return False
        if not pre_init.receivers and not post_init.receivers:
            return True
        return all(_quiet(model) for model in self.models)


def rows_for(
    model: type[Model], names: Sequence[str], populators: list[Any], db: str
) -> Rows | None:
    """The read's ``Rows``, or None when one of its models is not ``eligible`` (``from_db``
    and Django's populators then, always)."""
    if not eligible(model, names):
        return None
    models = [model]
    fast = _fast_populators(populators, models)
    if fast is None:
        return None
    return Rows(maker(model, names, db), fast, tuple(models))


# ------------------------------------------------------------------------------------------
# The write side: instances a change builds from values it has (issue 25, session 21)
# ------------------------------------------------------------------------------------------
# ``Model.__init__`` with one value per column in the model's order (``Model(*values)``, an
# unsaved row) or ``from_db``'s padded values leaves: ``_state`` (a fresh ``ModelState``), then
# each given column's value under its attname, in the concrete fields' order. ``_state``'s own
# ``__dict__`` gets ``fields_cache`` only if a foreign key's descriptor looked at the cache:
# ``ForeignKeyDeferredAttribute.__set__`` does for a value that is not None (``None != None``
# ends its test first); then ``from_db`` sets ``adding`` (False) and ``db``. An unsaved row
# keeps the class's ``adding`` (True) and ``db`` (None). Built here the same, key by key, where
# ``eligible``; else, or with ``WRITES`` off or a ``pre_init``/``post_init`` receiver for the
# model (checked on every call, as ``Rows.ready``), by Django itself.
def _foreign_keys(model: type[Model], names: Sequence[str]) -> tuple[int, ...]:
    """Where in ``names`` a column is stored by ``ForeignKeyDeferredAttribute``."""
    return tuple(
        i
        for i, n in enumerate(names)
        if type(inspect.getattr_static(model, n, None)) is ForeignKeyDeferredAttribute
    )


def _direct(model: type[Model]) -> bool:
    """Whether to build ``model``'s instance here now (``WRITES``, no init receiver)."""
    if not WRITES:
        return False
    return (not pre_init.receivers and not post_init.receivers) or _quiet(model)


def _built(
    model: type[Model], names: tuple[str, ...], keys: tuple[int, ...], values: Sequence[Any]
) -> Any:
    """``model``'s instance of ``values`` for ``names`` as ``Model.__init__`` leaves it (``_state``
    fresh, ``fields_cache`` only for a foreign key value not None, at ``keys``)."""
    state = _new(ModelState)
    for i in keys:
        if values[i] is not None:
            state.__dict__["fields_cache"] = {}
            break
    obj = _new(model)
    attrs = obj.__dict__
    attrs["_state"] = state
    attrs.update(zip(names, values))  # noqa: B905 - the callers check the count
    return obj


def _loaded(model: type[Model], names: tuple[str, ...]) -> Callable[[str, Sequence[Any]], Any]:
    if not eligible(model, names):
        return lambda db, values: model.from_db(db, names, values)
    keys = _foreign_keys(model, names)

    def make(db: str, values: Sequence[Any]) -> Any:
        if len(values) != len(names) or not _direct(model):
            return model.from_db(db, names, values)
        obj = _built(model, names, keys, values)
        kept = obj._state.__dict__  # then ``from_db``'s two, after ``fields_cache``
        kept["adding"] = False
        kept["db"] = db
        return obj

    return make


_LOADED: dict[tuple[type[Model], tuple[str, ...]], Callable[[str, Sequence[Any]], Any]] = {}


def loaded(model: type[Model], names: Sequence[str]) -> Callable[[str, Sequence[Any]], Any]:
    """A function of ``(db, values)`` giving the instance ``model.from_db(db, names, values)``
    gives (the columns ``names`` read, the rest deferred); made once per model and names."""
    key = (model, tuple(names))
    try:
        return _LOADED[key]
    except KeyError:
        make = _LOADED[key] = _loaded(model, key[1])
        return make


def unsaved(model: type[Model]) -> Callable[[Sequence[Any]], Any]:
    """A function of one value per concrete column, in the model's order, giving the unsaved
    instance ``model(*values)`` gives."""
    names = tuple(f.attname for f in model._meta.concrete_fields)
    if not eligible(model, names):
        return lambda values: model(*values)
    keys = _foreign_keys(model, names)

    def make(values: Sequence[Any]) -> Any:
        if len(values) != len(names) or not _direct(model):
            return model(*values)
        return _built(model, names, keys, values)

    return make
