"""Every registered game plays to its end through the one service layer.

Parametrised over the engine registry: a new game is exercised here the moment it is
registered, with no test written for it -- random legal actions of random seats, clock jumps,
fired and swept deadlines, until the engine says the game is over.  What the platform owes
every game is checked after every change: one version per change, gap-free event numbers, the
stored snapshot equal to the engine's own replay, seat scores equal to the engine's, a
``Round`` row per dealt round with its result filed under the engine's ``ROUND_END_EVENT``, and
an illegal action refused with a 4xx code and nothing changed.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.db.models import Count, Max, Min

from games import services
from games.engines import KINDS, engine_for
from games.errors import ServiceError
from games.models import Event, Game, Round, Seat

#: Clock jumps: tiny steps and the long waits that let every timer of every game run out.
JUMPS = [0, 1, 250, 1000, 2001, 3001, 8000, 31_000, 61_000]


def _play(kind: str, users: list[Any], fake_clock: Any, seed: int, max_steps: int) -> Game:
    engine = engine_for(kind)
    rng = random.Random(seed)
    n = rng.randint(engine.MIN_SEATS, min(engine.MAX_SEATS, 4))
    players = users[:n]
    game = services.game_create(host=players[0], kind=kind)
    for p in players[1:]:
        services.game_join(game=game, user=p)
    services.game_start(game=game, user=players[0], seed=f"platform-{kind}-{seed}")
    game.refresh_from_db()
    for _ in range(max_steps):
        if game.status != Game.Status.PLAYING:
            break
        fake_clock.advance(rng.choice(JUMPS))
        before = game.version
        state = engine.GameState.from_json(game.state)
        options = [
            (seat, a) for seat in range(n) for a in engine.legal_actions(state, seat, fake_clock.ms)
        ]
        roll = rng.random()
        if roll < 0.1 or not options:
            services.game_sweep()
        elif roll < 0.15 and game.deadlines:
            services.game_fire_deadline(game_id=game.pk, key=rng.choice(game.deadlines)["key"])
        else:
            seat, action = rng.choice(options)
            services.game_act(
                game=game,
                user=players[seat],
                action=action.to_wire(),
                expected_version=game.version,
            )
        game.refresh_from_db()
        assert game.version in (before, before + 1)
        _check_invariants(game, engine)
    return game


def _check_invariants(game: Game, engine: Any) -> None:
    # Gap-free 1..last_seq: (game, seq) is unique (``event_unique_seq``), so a count, a
    # lowest and a highest equal to it say so in one row, not the whole log at every step.
    seqs = Event.objects.filter(game=game).aggregate(n=Count("seq"), lo=Min("seq"), hi=Max("seq"))
    assert (seqs["n"], seqs["lo"], seqs["hi"]) == (game.last_seq, 1, game.last_seq), seqs
    state = engine.GameState.from_json(game.state)
    assert state.to_json() == game.state
    scores = list(Seat.objects.filter(game=game).order_by("number").values_list("score", flat=True))
    assert scores == list(state.scores)
    dealt = Event.objects.filter(game=game, type="round_dealt").count()
    assert Round.objects.filter(game=game).count() == dealt
    # One query for every round end and its Round (a lazy ``ev.round`` was a query per round,
    # every step: the most of this module's queries in a long Triple Crown game).
    ended = Event.objects.filter(game=game, type=engine.ROUND_END_EVENT).select_related("round")
    for ev in ended:
        assert ev.round is not None and ev.round.result == ev.data
    pending = engine.pending_deadlines(state)
    assert game.deadlines == [d.to_json() for d in pending]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("seed", range(3))
def test_each_game_plays_to_its_end_through_the_service_layer(
    kind: str, seed: int, users: list[Any], fake_clock: Any
) -> None:
    game = _play(kind, users, fake_clock, seed, max_steps=4000)
    assert game.status == Game.Status.FINISHED, (kind, game.version)
    state = engine_for(kind).GameState.from_json(game.state)
    assert game.winners == list(state.winners) and game.winners
    assert Event.objects.filter(game=game, type="game_over").count() == 1


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_illegal_or_malformed_action_is_a_4xx_and_changes_nothing(
    kind: str, users: list[Any], fake_clock: Any
) -> None:
    game = _play(kind, users, fake_clock, seed=99, max_steps=5)
    game.refresh_from_db()
    if game.status != Game.Status.PLAYING:  # pragma: no cover - a five-step game is unheard of
        pytest.skip("the game ended already")
    before = (game.version, game.last_seq, game.state)
    for action in ({"type": "no_such_action"}, {"nope": 1}, {"type": None}):
        with pytest.raises(ServiceError) as info:
            services.game_act(game=game, user=users[0], action=action, expected_version=None)
        assert 400 <= info.value.status < 500 and info.value.code
    game.refresh_from_db()
    assert (game.version, game.last_seq, game.state) == before


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_stacked_deck_deals_as_stacked_and_replays(
    kind: str, users: list[Any], fake_clock: Any
) -> None:
    """``game_start(decks=…)`` (tests, the admin) reaches the engine, and the replay log
    records it, so the replay of a stacked game is still exact."""
    from history import replay

    engine = engine_for(kind)
    deck = list(reversed(engine.FULL_DECK))
    players = users[: engine.MIN_SEATS]
    game = services.game_create(host=players[0], kind=kind)
    for p in players[1:]:
        services.game_join(game=game, user=p)
    services.game_start(game=game, user=players[0], decks=[deck])
    assert Round.objects.get(game=game, number=1).deck == deck
    game.refresh_from_db()
    states = list(replay.replay_states(game))
    assert states[-1].state.to_json() == game.state


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_game_stopped_mid_hand_offers_no_move_live_or_in_its_replay(
    kind: str, users: list[Any], fake_clock: Any, django_user_model: Any
) -> None:
    """An admin's "end now" in the middle of a hand: no seat is told it may move -- not by
    ``you.can`` and not by the engine's own move lists (``MOVE_KEYS``: Cribbage's
    ``playable``, Triple Crown's ``legal``), neither in the live payload nor in the replay's
    last frame for that seat.  The stop is taken at a moment where some seat had a move."""
    from games import selectors
    from history import replay

    engine = engine_for(kind)
    keys = {"can"} | set(getattr(engine, "MOVE_KEYS", ()))
    game = _play(kind, users, fake_clock, seed=5, max_steps=0)
    rng = random.Random(5)
    n = game.seats.count()

    def moves(g: Game) -> list[str]:
        out = []
        for seat in range(n):
            you = selectors.game_payload_for_seat(game=g, seat=seat)["state"]["you"]
            out += [f"{seat}:{k}" for k in keys if you.get(k)]
        return out

    wanted = keys - {"can"} or {"can"}  # the engine's own move lists, where it has any

    def shown() -> bool:
        return any(m.split(":")[1] in wanted for m in moves(game))

    for step in range(400):  # a few moves in, then the first moment a move list is shown
        if step >= 3 and shown():
            break
        state = engine.GameState.from_json(game.state)
        options = [(s, a) for s in range(n) for a in engine.legal_actions(state, s, fake_clock.ms)]
        if not options:
            fake_clock.advance(3001)
            services.game_sweep()
        else:
            seat, action = rng.choice(options)
            services.game_act(
                game=game, user=users[seat], action=action.to_wire(), expected_version=None
            )
        game.refresh_from_db()
    assert game.status == Game.Status.PLAYING
    assert shown(), "no seat was shown a move: the test would prove nothing"
    staff = django_user_model.objects.create_user("stopper", is_staff=True)
    services.game_end_now(game=game, user=staff)
    game.refresh_from_db()
    assert moves(game) == []
    for seat in range(n):
        frames = replay.replay_frames(game=game, viewer=seat)[1]
        you = frames[-1]["state"]["you"]
        assert [k for k in keys if you.get(k)] == [], (seat, you)
