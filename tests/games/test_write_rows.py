"""The write side's model instances are built without ``Model.__init__`` (``crisp_site.rows``'s
``loaded`` and ``unsaved``, issue 25, session 21), and are exactly the instances Django built.

Each builder of the service layer (an event row, an engine call row, the current round's row,
the broadcast's copy of the game) and the ack's game (``consumers._act``) is built both ways
(``rows.WRITES``) and compared attribute by attribute, in order: the values under each attname,
``_state``'s own attributes (``fields_cache`` is there only when Django's foreign key descriptor
made it), the cached relations (the same objects), the deferred columns, ``pk``. Then the way
back (a ``pre_init``/``post_init`` receiver, a model that constructs otherwise, a wrong count
of values: Django builds it) and the engines' registry, which imports each engine once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections, transaction
from django.db.models import Model
from django.db.models.signals import post_init, pre_init

from crisp_site import rows
from games import clock, consumers, engines
from games.models import EngineCall, Event, Game, Round, Seat
from games.services import commit


def _picture(obj: Any) -> Any:
    """Everything an instance holds, in order: its class, its ``__dict__`` (``_state``'s own
    ``__dict__``, the related objects cached there by identity), its deferred columns, ``pk``."""
    if not isinstance(obj, Model):
        return obj
    attrs = []
    for name, value in vars(obj).items():
        if name == "_state":
            state = [
                (k, {c: id(o) for c, o in v.items()} if k == "fields_cache" else v)
                for k, v in vars(value).items()
            ]
            attrs.append((name, type(value), value.adding, value.db, state))
        else:
            attrs.append((name, value))
    return (type(obj), attrs, obj.get_deferred_fields(), obj.pk)


def _both(build: Callable[[], Any]) -> tuple[Any, Any]:
    """``build()``'s instance made by Django (``rows.WRITES`` off) and made here."""
    rows.WRITES = False
    try:
        slow = build()
    finally:
        rows.WRITES = True
    return slow, build()


_WHEN = clock.to_datetime(1_700_000_000_000)
_COMMITTED = [9, "crisp", "playing", 12, {"round": {"number": 1}}, []]

_SEAT = rows.loaded(Seat, ("id", "game_id", "user_id"))
#: Every builder with values of each shape it is given: a foreign key set, None, missing.
CASES: dict[str, Callable[[], Any]] = {
    "event with round": lambda: commit._NEW_EVENT(
        (None, 3, 8, 14, 12, "engine", "drawn", {"seat": 1}, _WHEN)
    ),
    "event without round": lambda: commit._NEW_EVENT(
        (None, 3, None, 14, 12, "lobby", "seat_back", {}, _WHEN)
    ),
    "event of no game yet": lambda: commit._NEW_EVENT(
        (None, None, None, 1, 1, "lobby", "x", {}, _WHEN)
    ),
    "engine call": lambda: commit._NEW_CALL(
        [None, 3, 12, "apply", 1_700_000_000_000, 1, {"type": "draw"}, "", None, None, None]
    ),
    "round of the lock": lambda: commit._ROUND_ROW("default", (8, 3, 1)),
    "round of no game": lambda: commit._ROUND_ROW("other", (8, None, 1)),
    "committed game": lambda: commit._COMMITTED_GAME("default", _COMMITTED),
    "ack's game": lambda: rows.loaded(Game, ("id", "kind", "version"))("default", (9, "crisp", 4)),
    "seat with a user": lambda: rows.loaded(Seat, ("id", "game_id", "user_id"))(
        "default", (1, 3, 5)
    ),
    "seat without": lambda: rows.loaded(Seat, ("id", "game_id", "user_id"))("x", (1, 3, None)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_builder_leaves_what_django_left(case: str) -> None:
    slow, fast = _both(CASES[case])
    assert _picture(fast) == _picture(slow)
    assert fast.__class__ is slow.__class__
    if slow.pk is not None:
        assert fast == slow and hash(fast) == hash(slow)


def test_the_engine_call_s_columns_are_the_model_s() -> None:
    """``CASES``' engine call gives one value per column (else it would test a fallback)."""
    assert len(EngineCall._meta.concrete_fields) == 11
    assert len(Event._meta.concrete_fields) == 9


@pytest.mark.django_db
@pytest.mark.parametrize("with_round", [False, True])
def test_the_service_layer_s_rows_are_what_django_built(
    with_round: bool, start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = start_game(users[:3])
    with transaction.atomic():
        locked = commit._lock(game.pk)
        number = locked.lock_round_number
        rnd = commit._round(locked, number) if with_round else None
        seq = locked.last_seq

        def event() -> Event:
            locked.last_seq = seq  # each way numbers the same event
            return commit._event_row(
                locked,
                origin=Event.Origin.ENGINE,
                type="some_event",
                data={"seat": 2},
                version=locked.version + 1,
                round=rnd,
                at_ms=fake_clock.ms,
            )

        built = {
            "event": event,
            "call": lambda: commit._call_row(
                locked, 4, fake_clock.ms, {"call": "apply", "seat": 1, "action": {"type": "x"}}
            ),
            "round": lambda: commit._round(locked, number),
            "committed": lambda: commit._committed_game(locked, 7, {"round": {}}),
        }
        for name, build in built.items():
            slow, fast = _both(build)
            assert _picture(fast) == _picture(slow), name
    assert (fast.version, fast.kind, fast.get_deferred_fields()) == (
        7,
        locked.kind,
        {f.attname for f in Game._meta.concrete_fields} - set(commit._COMMITTED_COLUMNS),
    )


@pytest.mark.django_db
def test_an_action_builds_no_row_through_model_init(
    start_game: Any, users: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole action (``consumers._act``: the lock + seats, the engine call, the events, the
    round, the broadcast's copy, the ack's game) builds every instance without ``__init__``;
    with the switch off, the write side's go through it again."""
    game = start_game(users[:3])
    built: list[type] = []
    real = Model.__init__

    def counting(self: Model, *args: Any, **kwargs: Any) -> None:
        built.append(type(self))
        real(self, *args, **kwargs)

    seated = [s.user for s in game.seats.order_by("number")]
    consumers._act(game.pk, seated[0], {"action": {"type": "look"}})  # every read compiled
    monkeypatch.setattr(Model, "__init__", counting)
    consumers._act(game.pk, seated[1], {"action": {"type": "look"}})
    assert built == []
    rows.WRITES = False
    try:
        consumers._act(game.pk, seated[2], {"action": {"type": "look"}})
    finally:
        rows.WRITES = True
    assert {EngineCall, Event, Round, Game} <= set(built)


@pytest.mark.django_db
@pytest.mark.parametrize("signal", [pre_init, post_init], ids=["pre_init", "post_init"])
def test_a_receiver_of_the_model_s_init_sees_every_row(
    signal: Any, start_game: Any, users: list[Any]
) -> None:
    game = start_game(users[:3])
    seen: list[Any] = []

    def receiver(sender: type, **kwargs: Any) -> None:
        seen.append(sender)

    signal.connect(receiver, sender=Event)
    try:
        with transaction.atomic():
            locked = commit._lock(game.pk)
            rows.WRITES = False
            try:
                slow = commit._event_row(
                    locked, origin="lobby", type="x", data={}, version=1, at_ms=0
                )
            finally:
                rows.WRITES = True
            locked.last_seq -= 1
            fast = commit._event_row(locked, origin="lobby", type="x", data={}, version=1, at_ms=0)
            assert seen == [Event, Event]
            assert _picture(fast) == _picture(slow)
            commit._committed_game(locked, 1, {})  # a Game: not a receiver's
            assert seen == [Event, Event]
    finally:
        signal.disconnect(receiver, sender=Event)
    seen.clear()
    CASES["event with round"]()
    assert seen == []


def test_what_django_would_build_otherwise_it_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Columns out of order, a model with its own construction, a wrong count of values."""
    out_of_order = rows.loaded(Seat, ("game_id", "id"))
    slow = Seat.from_db("default", ("game_id", "id"), (3, 1))
    assert _picture(out_of_order("default", (3, 1))) == _picture(slow)
    assert rows.loaded(Seat, ("game_id", "id")) is out_of_order  # made once

    with pytest.raises(IndexError):  # as ``Event(*values)``
        commit._NEW_EVENT(tuple(range(10)))

    made: list[Any] = []

    def own_setattr(self: Any, name: str, value: Any) -> None:
        made.append(name)
        object.__setattr__(self, name, value)

    monkeypatch.setattr(Event, "__setattr__", own_setattr)
    values = (None, 3, None, 1, 1, "lobby", "x", {}, _WHEN)
    row = rows.unsaved(Event)(values)
    assert "seq" in made  # Event.__init__ set it, through the model's own __setattr__
    assert _picture(row) == _picture(Event(*values))


def test_an_engine_is_imported_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``engine_for`` keeps each engine it imported: no ``importlib`` look-up again."""
    for kind in engines.KINDS:
        engines.engine_for(kind)

    def forbidden(name: str, package: str | None = None) -> Any:
        raise AssertionError(f"{name} imported again")

    monkeypatch.setattr(engines.importlib, "import_module", forbidden)
    for kind, package in engines.KINDS.items():
        assert engines.engine_for(kind) is sys.modules[package]
    with pytest.raises(KeyError):
        engines.engine_for("no_such_kind")


@pytest.mark.django_db
def test_the_on_commit_hand_over_looks_the_connection_up_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``_announce`` and ``_announce_turns`` register their callbacks as
    ``transaction.on_commit(f, robust=True)`` does, one look-up of the connection each."""
    looked: list[str] = []
    real = type(connections).__getitem__

    def counting(self: Any, alias: str) -> Any:
        looked.append(alias)
        return real(self, alias)

    with transaction.atomic():
        registered = connections["default"].run_on_commit
        before = len(registered)
        monkeypatch.setattr(type(connections), "__getitem__", counting)
        commit._announce(1, 2, [("k", _WHEN)], [(0, 100)], None)
        assert (len(registered) - before, looked) == (3, ["default"])
        looked.clear()
        turns = commit.Turns(newly=[5], changed=[5, 6], deadline=None)
        commit._announce_turns(Game(pk=1), turns)
        assert (len(registered) - before, looked) == (5, ["default"])
        monkeypatch.undo()
        assert all(robust for _, _, robust in registered[before:])
        transaction.set_rollback(True)  # nothing runs
