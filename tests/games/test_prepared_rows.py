"""The compiled reads' instances are built without ``Model.__init__`` (``crisp_site.rows``,
issue 25, session 20), and are exactly the instances ``Model.from_db`` built.

Every compiled read of the project (an action's and a timer's lock + seats, the round, the REST
game and seats reads, the events, the API token) is read twice, once each way
(``rows.FAST``), and compared attribute by attribute: the values under each attname, the
deferred columns, ``_state``, the related objects cached by ``select_related`` and by the
service layer, the annotations, equality and ``pk``. Then what an instance is used for: a
deferred column loading on access, ``save(update_fields=...)`` and ``refresh_from_db``. And the
way back: a ``pre_init``/``post_init`` receiver connected after the read was compiled sends
the read through ``from_db`` again (the receiver sees every instance).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import Model
from django.db.models.signals import post_init, pre_init
from django.test.utils import CaptureQueriesContext

from accounts import selectors as account_selectors
from accounts import services as account_services
from crisp_site import rows
from games import selectors
from games.api import views
from games.models import Game, Seat
from games.services import commit

pytestmark = pytest.mark.django_db


def _picture(obj: Any, depth: int = 0) -> Any:
    """Everything an instance holds: its class, its ``__dict__`` (``_state`` and the related
    objects cached on it pictured in turn), its deferred columns, ``pk``."""
    if not isinstance(obj, Model):
        return obj
    assert depth < 4
    attrs = {}
    for name, value in vars(obj).items():
        if name == "_state":
            cached = {k: _picture(v, depth + 1) for k, v in value.fields_cache.items()}
            attrs[name] = (type(value), value.adding, value.db, cached, sorted(vars(value)))
        else:
            attrs[name] = value
    return (type(obj), attrs, obj.get_deferred_fields(), obj.pk)


def _both(read: Callable[[], list[Any]]) -> tuple[list[Any], list[Any]]:
    """``read()``'s instances built by ``from_db`` and built here."""
    rows.FAST = False
    try:
        slow = read()
    finally:
        rows.FAST = True
    return slow, read()


def _flat(locked: tuple[Any, list[Any]]) -> list[Any]:
    return [locked[0], *locked[1]]


def _reads(game: Game, users: list[Any]) -> dict[str, Callable[[], list[Any]]]:
    number = game.state["round"]["number"]
    _, key = account_services.token_create(user=users[0], name="bot")
    token = account_selectors.key_hash(key)
    return {
        "lock + seats": lambda: _flat(commit._lock_with_seats(game.pk)),
        "timer lock + seats": lambda: _flat(commit._lock_playing_with_seats(game.pk)),
        "lock": lambda: commit._LOCK.fetch(game.pk),
        "lock playing, skip locked": lambda: commit._LOCK_PLAYING_SKIP.fetch(game.pk),
        "seats": lambda: commit._seats(game),
        "round": lambda: commit._ROUND.fetch(game.pk, number),
        "game, seated viewer": lambda: views._GAME_SEATED.fetch(game.pk, users[1].pk),
        "game": lambda: views._GAME.fetch(game.pk),
        "game without state, seated": lambda: views._GAME_SEATED_NO_STATE.fetch(
            game.pk, users[1].pk
        ),
        "game without state": lambda: views._GAME_NO_STATE.fetch(game.pk),
        "detail seats": lambda: selectors._detail_seats(game),
        "events": lambda: views._events(game, 0, 500),
        "api token": lambda: account_selectors._TOKEN.fetch(token),
    }


def _started(start_game: Callable[..., Any], users: list[Any]) -> Game:
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    return game


def test_every_compiled_read_builds_what_from_db_built(
    start_game: Callable[..., Any], users: list[Any], fake_clock: Any
) -> None:
    game = _started(start_game, users)
    fake_clock.advance(10)
    with transaction.atomic():
        for name, read in _reads(game, users).items():
            slow, fast = _both(read)
            assert slow, name
            assert [_picture(o) for o in fast] == [_picture(o) for o in slow], name
            assert fast == slow, name  # Model.__eq__: the class and pk
            assert [hash(o) for o in fast] == [hash(o) for o in slow], name


def test_the_reads_are_built_here_not_by_model_init(
    start_game: Callable[..., Any], users: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    game = _started(start_game, users)
    reads = _reads(game, users)
    built: list[type] = []
    real = Model.__init__

    def counting(self: Model, *args: Any, **kwargs: Any) -> None:
        built.append(type(self))
        real(self, *args, **kwargs)

    monkeypatch.setattr(Model, "__init__", counting)
    with transaction.atomic():
        for name, read in reads.items():
            assert read(), name
            assert built == [], name
        rows.FAST = False
        try:
            commit._lock_with_seats(game.pk)
        finally:
            rows.FAST = True
    assert built.count(Game) == 1 and built.count(Seat) == 4


def test_deferred_columns_save_and_refresh_as_from_db_s(
    start_game: Callable[..., Any], users: list[Any]
) -> None:
    game = _started(start_game, users)
    with transaction.atomic():
        locked, seats = commit._lock_with_seats(game.pk)
        seat = seats[1]
        assert "bot_memory" in seat.get_deferred_fields()
        assert "joined_at" in seat.get_deferred_fields()
        assert "password" in seat.user.get_deferred_fields()
        assert locked.get_deferred_fields() == set()
        assert locked.lock_round_number == game.state["round"]["number"]
        with CaptureQueriesContext(connection) as queries:
            assert seat.joined_at is not None  # loads on access, one query
        assert len(queries) == 1
        assert "joined_at" not in seat.get_deferred_fields()
        # An update of the columns named only; the others (deferred) are not written.
        seat.score = 41
        with CaptureQueriesContext(connection) as queries:
            seat.save(update_fields=["score"])
        assert len(queries) == 1 and "UPDATE" in queries[0]["sql"]
        assert "bot_memory" not in queries[0]["sql"]
        # A plain save of a read with deferred columns writes the loaded ones (Django's rule).
        seat.missed = 2
        seat.save()
        seat.refresh_from_db()
        assert (seat.score, seat.missed) == (41, 2)
        assert Seat.objects.get(pk=seat.pk).score == 41
        locked.private = not locked.private
        locked.save(update_fields=["private"])
        locked.refresh_from_db()
        assert locked.private is not game.private
        assert locked.host_id == game.host_id and locked.host == users[0]
        assert not locked._state.adding and locked._state.db == "default"


@pytest.mark.parametrize("signal", [pre_init, post_init], ids=["pre_init", "post_init"])
def test_a_receiver_of_the_model_s_init_sends_the_read_through_from_db(
    start_game: Callable[..., Any], users: list[Any], signal: Any
) -> None:
    game = _started(start_game, users)
    with transaction.atomic():  # compiled before the receiver is connected
        commit._lock_with_seats(game.pk)
    seen: list[Any] = []

    def receiver(sender: type, **kwargs: Any) -> None:
        seen.append(sender)

    signal.connect(receiver, sender=Seat)
    try:
        with transaction.atomic():
            _, seats = commit._lock_with_seats(game.pk)
            assert len(seats) == 4
            # The game has no receiver, but its read is one of the same pair: whole reads
            # fall back, and the seats were built by ``Seat.__init__``.
            assert seen == [Seat] * 4
            seen.clear()
            assert commit._LOCK.fetch(game.pk)
            assert seen == []
    finally:
        signal.disconnect(receiver, sender=Seat)
    with transaction.atomic():
        commit._lock_with_seats(game.pk)
    assert seen == []


def test_what_is_not_the_same_instance_is_not_built_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``from_db`` assigns the values in the concrete fields' order; an override of the
    model's construction is the model's own business."""
    seat = ["id", "game_id", "user_id", "number"]
    assert rows.eligible(Seat, seat)
    assert not rows.eligible(Seat, ["game_id", "id", "user_id", "number"])
    assert not rows.eligible(Seat, [*seat, "no_such_column"])

    def own(cls: type, db: str, field_names: Any, values: Any) -> Any:  # pragma: no cover
        return Model.from_db.__func__(cls, db, field_names, values)  # type: ignore[attr-defined]

    monkeypatch.setattr(Seat, "from_db", classmethod(own))
    assert not rows.eligible(Seat, seat)
    monkeypatch.undo()
    monkeypatch.setattr(Seat, "__setattr__", lambda self, k, v: object.__setattr__(self, k, v))
    assert not rows.eligible(Seat, seat)
