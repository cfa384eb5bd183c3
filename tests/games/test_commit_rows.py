"""The unsaved rows of a change, built positionally (issue 25, session 19).

``commit._event_row``, ``commit._call_row`` and ``commit._committed_game`` build their model
instances through ``Model.__init__``'s positional path (or ``from_db``) instead of keywords,
for the daphne's database thread. These pin that each is the row the keyword path built --
every column, the cached relations, nothing read -- so a wrong column order fails here.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from games import clock, consumers, selectors
from games.models import EngineCall, Event, Game, Round
from games.services import commit

from .conftest import act

pytestmark = pytest.mark.django_db


def _columns(row: Any) -> dict[str, Any]:
    return {f.attname: getattr(row, f.attname) for f in type(row)._meta.concrete_fields}


@pytest.mark.parametrize("with_round", [False, True])
def test_an_event_row_is_the_row_the_keywords_built(
    with_round: bool, start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = start_game(users[:3])
    with transaction.atomic():
        locked = commit._lock(game.pk)
        rnd = Round.objects.get(game=locked, number=1) if with_round else None
        seq = locked.last_seq
        data = {"seat": 2, "at": fake_clock.ms}
        with CaptureQueriesContext(connection) as queries:
            row = commit._event_row(
                locked,
                origin=Event.Origin.ENGINE,
                type="some_event",
                data=data,
                version=locked.version + 1,
                round=rnd,
                at_ms=fake_clock.ms + 7,
            )
            assert row.game is locked and row.round is rnd  # cached: no query
        assert len(queries) == 0
    by_keywords = Event(
        game=locked,
        round=rnd,
        seq=seq + 1,
        version=locked.version + 1,
        origin=Event.Origin.ENGINE,
        type="some_event",
        data=data,
        created_at=clock.to_datetime(fake_clock.ms + 7),
    )
    assert locked.last_seq == seq + 1
    assert _columns(row) == _columns(by_keywords)
    assert row.data is data
    assert (row._state.adding, row._state.db) == (True, None)
    assert row.round_id == (rnd.pk if rnd is not None else None)


@pytest.mark.parametrize(
    "call",
    [
        {"call": "apply", "seat": 1, "action": {"type": "a", "place": "left"}},
        {"call": "fire", "key": "r1:t2:d1:timeout"},
        {"call": "advance"},
        {"call": "new_game", "settings": {"target_score": 50}, "seats": 3, "decks": [["AS"]]},
    ],
)
def test_an_engine_call_row_is_the_row_the_keywords_built(
    call: dict[str, Any], start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = start_game(users[:2])
    with CaptureQueriesContext(connection) as queries:
        row = commit._call_row(game, 9, fake_clock.ms, call)
        assert row.game is game
    assert len(queries) == 0
    by_keywords = EngineCall(game=game, version=9, at=fake_clock.ms, **call)
    assert _columns(row) == _columns(by_keywords)
    assert (row._state.adding, row._state.db) == (True, None)
    row.save()  # the row the write stores, as the keyword one would be
    stored = EngineCall.objects.get(pk=row.pk)
    assert {k: v for k, v in _columns(stored).items() if k != "id"} == {
        k: v for k, v in _columns(by_keywords).items() if k != "id"
    }


def test_an_engine_call_naming_anything_else_is_refused_as_before(
    start_game: Any, users: list[Any]
) -> None:
    game = start_game(users[:2])
    with pytest.raises(TypeError, match="unexpected keyword"):
        commit._call_row(game, 9, 0, {"call": "advance", "bogus": 1})
    with pytest.raises(TypeError):
        commit._call_row(game, 9, 0, {"call": "advance", "version": 3})


def test_the_committed_copy_is_the_row_as_committed(
    start_game: Any,
    users: list[Any],
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(
        sys.modules["games.broadcast"],
        "game_changed",
        lambda game_id, version, change=None: seen.append(change),
        raising=False,
    )
    game = start_game(users[:3])
    with django_capture_on_commit_callbacks(execute=True):
        act(game, game.seats.get(number=1).user, {"type": "look"})
    (change,) = seen
    stored = Game.objects.get(pk=game.pk)
    copy = change.game
    for column in ("id", "kind", "status", "version", "state", "winners"):
        assert getattr(copy, column) == getattr(stored, column), column
    # Nothing else was made up: the other columns are deferred, as in an ``.only()`` read.
    assert copy.get_deferred_fields() == {
        f.attname
        for f in Game._meta.concrete_fields
        if f.attname not in {"id", "kind", "status", "version", "state", "winners"}
    }


def test_the_ack_of_an_action_is_its_events_as_the_actor_may_see_them(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = start_game(users[:3])
    seat = 2
    user = game.seats.get(number=seat).user
    got_seat, ack = consumers._act(
        game.pk, user, {"action": {"type": "look"}, "id": 5, "version": game.version}
    )
    stored = Game.objects.get(pk=game.pk)
    assert got_seat == seat
    assert (ack["type"], ack["id"], ack["version"], ack["replayed"]) == (
        "ack",
        5,
        stored.version,
        False,
    )
    rows = list(Event.objects.filter(game=stored, version=stored.version).order_by("seq"))
    assert rows
    assert ack["events"] == [
        selectors.event_payload(event=e, seat=seat, kind=stored.kind) for e in rows
    ]
