"""Issue 26: ``signals.your_move`` and the seats' ``turn_since`` / ``turn_deadline``.

The commit step persists who the table awaits (the engine's shared turn model) and, on commit
only, sends ``your_move`` for the people it newly awaits.  The oracle here is independent of
the implementation's bookkeeping: after every committed change the test asks the engine who is
awaited at the stored snapshot, keeps its own previous answer, and expects exactly the
difference -- people only, once each, nothing for a change that rolled back or was refused.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction

from games import clock, services, signals
from games.engines import engine_for, kinds
from games.errors import ServiceError
from games.models import Game, Seat

pytestmark = pytest.mark.django_db

JUMPS = [0, 1, 250, 1000, 3001, 8000, 31_000]


@pytest.fixture
def told() -> Iterator[list[dict[str, Any]]]:
    """Every ``your_move`` sent, in order."""
    sent: list[dict[str, Any]] = []

    def receiver(sender: Any, **kw: Any) -> None:
        sent.append(kw)

    signals.your_move.connect(receiver, dispatch_uid="test-your-move")
    yield sent
    signals.your_move.disconnect(dispatch_uid="test-your-move")


def _people_awaited(game: Game) -> set[int]:
    """The people (user ids) the engine says the stored snapshot awaits at its own clock."""
    if game.status != Game.Status.PLAYING:
        return set()
    engine = engine_for(game.kind)
    state = engine.GameState.from_json(game.state)
    seats = {s.number: s for s in Seat.objects.filter(game=game).select_related("user")}
    return {
        seats[n].user_id
        for n in engine.awaiting(state, state.clock)["seats"]
        if not seats[n].user.is_bot and not seats[n].sitting_in
    }


def _stored(game: Game) -> set[int]:
    return set(
        Seat.objects.filter(game=game, turn_since__isnull=False).values_list("user_id", flat=True)
    )


def _table(kind: str, users: list[Any], *, bots: bool = True) -> tuple[Game, list[Any]]:
    """Two people and, where the game has room, computer players: one, or as many as the
    game needs (Triple Crown: two)."""
    engine = engine_for(kind)
    people = users[:2]
    settings = {"target_score": 50} if kind == "crisp" else {}
    game = services.game_create(host=people[0], kind=kind, settings=settings)
    services.game_join(game=game, user=people[1])
    wanted = max(engine.MIN_SEATS - 2, 1 if bots and engine.MAX_SEATS > 2 else 0)
    for _ in range(wanted):
        services.game_add_bot(game=game, host=people[0], level="easy")
    services.game_start(game=game, user=people[0], seed=f"your-move-{kind}")
    game.refresh_from_db()
    return game, people


@pytest.mark.parametrize("kind", kinds())
def test_your_move_is_sent_once_per_newly_awaited_person(
    kind: str,
    users: list[Any],
    fake_clock: Any,
    told: list[dict[str, Any]],
    live_calls: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        game, people = _table(kind, users)
    engine = engine_for(kind)
    seat_user = dict(Seat.objects.filter(game=game).values_list("number", "user_id"))
    bot_ids = set(
        Seat.objects.filter(game=game, user__is_bot=True).values_list("user_id", flat=True)
    )
    awaited = _people_awaited(game)
    assert [sorted(t["user_ids"]) for t in told] == ([sorted(awaited)] if awaited else [])
    assert all(t["game"].pk == game.pk for t in told)
    assert _stored(game) == awaited
    rng = random.Random(kind)
    sends = len(told)
    for _ in range(150):
        if game.status != Game.Status.PLAYING:
            break
        fake_clock.advance(rng.choice(JUMPS))
        before = len(told)
        state = engine.GameState.from_json(game.state)
        options = [
            (seat, a)
            for seat in seat_user
            for a in engine.legal_actions(state, seat, fake_clock.ms)
        ]
        version = game.version
        with django_capture_on_commit_callbacks(execute=True):
            if not options or rng.random() < 0.1:
                services.game_sweep()
            else:
                seat, action = rng.choice(options)
                if seat_user[seat] in bot_ids:
                    services.game_bot_move(game_id=game.pk, seat_number=seat, version=version)
                else:
                    services.game_act(
                        game=game,
                        user=next(u for u in users if u.pk == seat_user[seat]),
                        action=action.to_wire(),
                        expected_version=version,
                    )
        game.refresh_from_db()
        now_awaited = _people_awaited(game)
        expected = now_awaited - awaited if game.version != version else set()
        got = told[before:]
        if expected:
            assert len(got) == 1, got
            assert sorted(got[0]["user_ids"]) == sorted(expected)
            assert not set(got[0]["user_ids"]) & bot_ids
            state = engine.GameState.from_json(game.state)
            deadline = engine.awaiting(state, state.clock)["deadline"]
            assert got[0]["deadline"] == (
                clock.to_datetime(deadline) if deadline is not None else None
            )
            sends += 1
        else:
            assert got == []
        assert _stored(game) == now_awaited
        awaited = now_awaited
    assert sends > 3, "the random game must have passed the move around"
    assert all(u in {p.pk for p in people} for t in told for u in t["user_ids"])
    # The wake-ups went to the people only, and to someone at every change of their lists.
    assert live_calls.turns and all(set(t) <= {p.pk for p in people} for t in live_calls.turns)


@pytest.mark.parametrize("kind", kinds())
def test_a_refused_action_or_a_rolled_back_change_tells_nobody(
    kind: str,
    users: list[Any],
    fake_clock: Any,
    told: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    game, _ = _table(kind, users)
    engine = engine_for(kind)
    state = engine.GameState.from_json(game.state)
    fake_clock.advance(8000)
    stored = list(Seat.objects.filter(game=game).values("pk", "turn_since", "turn_deadline"))
    seat_user = dict(Seat.objects.filter(game=game).values_list("number", "user_id"))
    people = {u.pk: u for u in users}
    # A refused move (of every person) commits nothing and tells nobody.
    with django_capture_on_commit_callbacks(execute=True):
        for s in seat_user:
            if seat_user[s] not in people:
                continue
            with pytest.raises(ServiceError):
                services.game_act(
                    game=game,
                    user=people[seat_user[s]],
                    action={"type": "nonsense"},
                    expected_version=game.version,
                )
    assert told == []
    # A legal move inside a transaction that then rolls back: nobody told, nothing stored.
    state = engine.GameState.from_json(game.state)
    everyone = {s.user_id: s.user for s in Seat.objects.filter(game=game).select_related("user")}
    seat, action = next(
        (s, a) for s in seat_user for a in engine.legal_actions(state, s, fake_clock.ms)
    )
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        services.game_act(
            game=game,
            user=everyone[seat_user[seat]],
            action=action.to_wire(),
            expected_version=game.version,
        )
        raise RuntimeError("roll back")
    assert told == []
    assert list(Seat.objects.filter(game=game).values("pk", "turn_since", "turn_deadline")) == (
        stored
    )


def test_a_look_by_the_awaited_seat_tells_nobody_again(
    users: list[Any],
    fake_clock: Any,
    told: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Crisp's opening look is a committed change that leaves the turn's seat awaited."""
    with django_capture_on_commit_callbacks(execute=True):
        game, _ = _table("crisp", users, bots=False)
    first = told[:]
    turn = game.state["round"]["turn"]["seat"]
    mover = Seat.objects.get(game=game, number=turn).user
    since = Seat.objects.get(game=game, number=turn).turn_since
    assert since is not None and [t["user_ids"] for t in first] == [[mover.pk]]
    fake_clock.advance(10)
    version = game.version
    with django_capture_on_commit_callbacks(execute=True):
        services.game_act(
            game=game, user=mover, action={"type": "look"}, expected_version=game.version
        )
    game.refresh_from_db()
    assert game.version == version + 1
    assert told == first
    assert Seat.objects.get(game=game, number=turn).turn_since == since


def test_computer_players_and_seats_sat_in_are_never_awaited(
    users: list[Any],
    fake_clock: Any,
    told: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Against the computer only the person is ever told; once a person has left a game in
    progress (a computer sits in for them), they are never told again and the next change
    clears their seat."""
    with django_capture_on_commit_callbacks(execute=True):
        game = services.game_vs_computer(user=users[0], kind="cribbage", level="easy")
    bot_seats = Seat.objects.filter(game=game, user__is_bot=True)
    assert bot_seats.count() == 1
    assert not bot_seats.filter(turn_since__isnull=False).exists()
    # The lay-away awaits both seats: only the person is told.
    assert [t["user_ids"] for t in told] == [[users[0].pk]]

    game, people = _table("crisp", users[2:])
    leaver = people[1]
    # Made the awaited seat (as the commit step stores it), so that leaving has something to
    # clear: at once, not at the game's next move.
    Seat.objects.filter(game=game, user=leaver).update(turn_since=clock.to_datetime(fake_clock.ms))
    with django_capture_on_commit_callbacks(execute=True):
        services.game_leave_playing(game=game, user=leaver)
    assert Seat.objects.get(game=game, user=leaver).turn_since is None
    before = len(told)
    for _ in range(6):  # every timer runs out: the game moves on, computer and timeouts
        with django_capture_on_commit_callbacks(execute=True):
            services.game_sweep(now=clock.to_datetime(fake_clock.advance(120_000)))
    game.refresh_from_db()
    assert game.version > 3
    assert all(leaver.pk not in t["user_ids"] for t in told[before:])
    assert Seat.objects.get(game=game, user=leaver).turn_since is None


def test_a_game_stopped_outside_the_engine_awaits_nobody(
    users: list[Any],
    start_game: Any,
    staff: Any,
    live_calls: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    game = start_game(users[:2], kind="cribbage")
    awaited = _stored(game)
    assert awaited
    with django_capture_on_commit_callbacks(execute=True):
        services.game_end_now(game=game, user=staff)
    assert _stored(game) == set()
    assert sorted(live_calls.turns[-1]) == sorted(awaited)


def test_taking_a_seat_back_on_its_move_puts_it_in_the_list_at_once(
    users: list[Any],
    fake_clock: Any,
    told: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    """ "I'm back" while the table awaits the seat: its person is told, without waiting for
    the next move (Cribbage's lay-away awaits both seats)."""
    game, people = _table("cribbage", users)
    Seat.objects.filter(game=game, user=people[1]).update(sitting_in=True, bot_level="medium")
    with django_capture_on_commit_callbacks(execute=True):
        services.game_rename(game=game, user=people[0], name="Friday cards")
    assert Seat.objects.get(game=game, user=people[1]).turn_since is None
    with django_capture_on_commit_callbacks(execute=True):
        services.game_back(game=game, user=people[1])
    assert Seat.objects.get(game=game, user=people[1]).turn_since is not None
    assert told[-1]["user_ids"] == [people[1].pk]
