"""game_act, idempotency, version checks, deadlines (fire / sweep) and the replay property."""

from __future__ import annotations

import random

import pytest

from games import clock, selectors, services
from games.engines.crisp import Action, GameState, Settings, advance, fire, new_game
from games.engines.crisp import apply as engine_apply
from games.errors import ServiceError
from games.models import Event, Game

from .conftest import act


def first_seat(game: Game) -> int:
    return game.state["round"]["turn"]["seat"]


def user_at(game: Game, seat: int):
    return game.seats.get(number=seat).user


def snapshot(game: Game) -> tuple[int, int]:
    game.refresh_from_db()
    return game.version, Event.objects.filter(game=game).count()


def test_act_applies_the_engine_at_server_now(users, start_game, fake_clock):
    g = start_game(users[:2])
    s = first_seat(g)
    fake_clock.advance(5000)  # memorise period over (R3)
    res = act(g, user_at(g, s), {"type": "draw", "source": "deck"})
    g.refresh_from_db()
    assert res.version == g.version == 4 and not res.replayed
    assert [e.type for e in res.events] == ["draw_ready", "draw"]
    assert [e.seq for e in res.events] == [6, 7]
    assert res.events[-1].data["at"] == fake_clock.ms
    assert g.state["round"]["turn"]["held"] is not None


@pytest.mark.parametrize(
    ("who", "action", "code", "status"),
    [
        ("other", {"type": "draw", "source": "deck"}, "not_your_turn", 409),
        ("first", {"type": "draw", "source": "pile"}, "pile_draw_off", 409),
        ("first", {"type": "swap", "place": "left"}, "wrong_phase", 409),
        ("first", {"type": "fly"}, "bad_action", 400),
        ("first", ["draw"], "bad_action", 400),
        ("first", {"type": "draw", "source": "deck", "x": 1}, "bad_action", 400),
        ("first", {"type": "call"}, "no_window", 409),
    ],
)
def test_refused_actions_change_nothing(users, start_game, fake_clock, who, action, code, status):
    g = start_game(users[:2])
    s = first_seat(g)
    fake_clock.advance(5000)
    before = snapshot(g)
    user = user_at(g, s if who == "first" else 1 - s)
    with pytest.raises(ServiceError) as info:
        act(g, user, action)
    assert (info.value.code, info.value.status) == (code, status)
    assert snapshot(g) == before


def test_too_early_during_memorise(users, start_game):
    g = start_game(users[:2])
    with pytest.raises(ServiceError) as info:
        act(g, user_at(g, first_seat(g)), {"type": "draw", "source": "deck"})
    assert info.value.code == "too_early"


def test_stale_version_is_refused_with_the_current_version(users, start_game, fake_clock):
    g = start_game(users[:2])
    user = user_at(g, first_seat(g))
    before = snapshot(g)
    with pytest.raises(ServiceError) as info:
        act(g, user, {"type": "call"}, expected_version=g.version - 1)
    assert info.value.code == "stale_version" and info.value.status == 409
    assert info.value.extra == {"version": g.version}
    assert snapshot(g) == before
    # Without an expected version there is no check (the engine's own refusal comes through).
    with pytest.raises(ServiceError) as info:
        act(g, user, {"type": "call"}, expected_version=None)
    assert info.value.code == "no_window"


def test_looks_of_different_seats_never_refuse_each_other(users, start_game):
    """R3: at the deal every seat asks for its look at once, each with the version it saw;
    looks commute, so none is refused as stale, and each seat gets its own two cards."""
    g = start_game(users[:4])
    seen = g.version
    for seat in range(4):
        result = act(g, user_at(g, seat), {"type": "look"}, expected_version=seen)
        (event,) = [e for e in result.events if e.type == "look"]
        assert event.data["seat"] == seat and event.data["left"] and event.data["right"]
    g.refresh_from_db()
    assert g.version == seen + 4
    # The exemption is for the look only: any other action still checks the version.
    with pytest.raises(ServiceError) as info:
        act(g, user_at(g, first_seat(g)), {"type": "draw", "source": "deck"}, expected_version=seen)
    assert info.value.code == "stale_version"


def test_not_seated_not_started_game_over(users, start_game, make_user, staff):
    g = start_game(users[:2])
    with pytest.raises(ServiceError) as info:
        act(g, make_user(), {"type": "look"})
    assert (info.value.code, info.value.status) == ("not_seated", 403)
    lobby = services.game_create(host=users[2])
    with pytest.raises(ServiceError) as info:
        act(lobby, users[2], {"type": "look"})
    assert info.value.code == "not_started"
    services.game_abandon(game=g, user=staff)
    with pytest.raises(ServiceError) as info:
        act(g, users[0], {"type": "look"})
    assert info.value.code == "game_over"


def test_idempotency_key_returns_the_first_result(users, start_game):
    g = start_game(users[:2])
    first = act(g, users[0], {"type": "look"}, idempotency_key="k-1")
    stale = g.version  # the retry carries the version from before the first attempt
    again = services.game_act(
        game=g, user=users[0], action={"type": "look"}, expected_version=stale - 1,
        idempotency_key="k-1",
    )  # fmt: skip
    assert again.replayed and again.version == first.version
    assert [e.pk for e in again.events] == [e.pk for e in first.events]
    g.refresh_from_db()
    assert g.version == first.version  # applied once
    with pytest.raises(ServiceError) as info:
        act(g, users[0], {"type": "call"}, idempotency_key="k-1")
    assert info.value.code == "idempotency_key_reused"
    # Keys are per user: the same key from another player is a different request.
    assert not act(g, users[1], {"type": "look"}, idempotency_key="k-1").replayed


def test_refused_action_does_not_burn_the_key(users, start_game, fake_clock):
    g = start_game(users[:2])
    s = first_seat(g)
    with pytest.raises(ServiceError):
        act(g, user_at(g, s), {"type": "draw", "source": "deck"}, idempotency_key="k")
    fake_clock.advance(5000)
    assert not act(
        g, user_at(g, s), {"type": "draw", "source": "deck"}, idempotency_key="k"
    ).replayed


def test_bad_idempotency_key(users, start_game):
    g = start_game(users[:2])
    with pytest.raises(ServiceError) as info:
        act(g, users[0], {"type": "look"}, idempotency_key="x" * 101)
    assert info.value.code == "bad_idempotency_key"


def test_act_broadcasts_and_schedules_on_commit_only(
    users, start_game, fake_clock, live_calls, django_capture_on_commit_callbacks
):
    g = start_game(users[:2], draw_seconds=30)
    s = first_seat(g)
    fake_clock.advance(5000)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        act(g, user_at(g, s), {"type": "draw", "source": "deck"})
        g.refresh_from_db()
        act(g, user_at(g, s), selectors.game_legal_actions(game=g, user=user_at(g, s))[0])
    assert live_calls.changed == [] and live_calls.scheduled == []
    for cb in callbacks:
        cb()
    assert live_calls.changed == [(g.pk, 4), (g.pk, 5)]
    g.refresh_from_db()
    assert [k for k, _ in live_calls.scheduled[-1][1]] == [d["key"] for d in g.deadlines]


def test_fire_deadline(
    users, start_game, fake_clock, live_calls, django_capture_on_commit_callbacks
):
    g = start_game(users[:2])
    key = g.deadlines[0]["key"]
    assert services.game_fire_deadline(game_id=g.pk, key=key) is False  # early
    assert services.game_fire_deadline(game_id=g.pk, key="r9:nonsense") is False  # unknown
    assert services.game_fire_deadline(game_id=999999, key=key) is False
    assert snapshot(g)[0] == 3
    fake_clock.advance(5000)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.game_fire_deadline(game_id=g.pk, key=key) is True
    g.refresh_from_db()
    assert g.version == 4 and live_calls.changed == [(g.pk, 4)]
    assert services.game_fire_deadline(game_id=g.pk, key=key) is False  # stale now
    assert snapshot(g)[0] == 4


def test_sweep_fires_overdue_games_only(users, start_game, fake_clock):
    a = start_game(users[:2])
    fake_clock.advance(1000)
    b = start_game(users[2:4])
    assert services.game_sweep() == 0
    fake_clock.advance(4500)  # a's memorise period is over, b's is not
    assert services.game_sweep() == 1
    assert snapshot(a)[0] == 4 and snapshot(b)[0] == 3
    assert services.game_sweep(now=clock.to_datetime(fake_clock.ms + 10_000)) == 1
    assert snapshot(b)[0] == 4


def play_random(game: Game, fake_clock, rng: random.Random, steps: int) -> list[tuple]:
    """Drive a game with random legal actions, clock jumps and timers; return the log of what
    was done, for an independent replay through the engine."""
    log: list[tuple] = []
    seats = list(game.seats.order_by("number").select_related("user"))
    for _ in range(steps):
        game.refresh_from_db()
        if game.status != "playing":
            break
        fake_clock.advance(rng.choice([0, 1, 700, 2000, 3001, 5000, 31_000]))
        roll = rng.random()
        if roll < 0.1 and game.deadlines:
            key = rng.choice(game.deadlines)["key"]
            if services.game_fire_deadline(game_id=game.pk, key=key):
                log.append(("fire", key, fake_clock.ms))
            continue
        if roll < 0.2:
            if services.game_sweep():
                log.append(("advance", fake_clock.ms))
            continue
        options = [
            (s, a) for s in seats for a in selectors.game_legal_actions(game=game, user=s.user)
        ]
        if not options:
            continue
        seat, action = rng.choice(options)
        services.game_act(game=game, user=seat.user, action=action, expected_version=game.version)
        log.append(("act", seat.number, action, fake_clock.ms))
    return log


@pytest.mark.parametrize("seed", range(4))
def test_stored_state_equals_the_replay(users, start_game, fake_clock, seed):
    rng = random.Random(seed)
    n = 2 + seed % 3
    t0 = fake_clock.ms
    g = start_game(users[:n], seed=f"replay-{seed}", draw_seconds=30, pile_draw=bool(seed % 2))
    log = play_random(g, fake_clock, rng, 150)
    assert len(log) > 20
    st, _ = new_game(
        seats=n, settings=Settings(target_score=50, draw_seconds=30, pile_draw=bool(seed % 2)),
        seed=f"replay-{seed}", now=t0,
    )  # fmt: skip
    for entry in log:
        if entry[0] == "act":
            st, _ = engine_apply(st, entry[1], Action.from_wire(entry[2]), entry[3])
        elif entry[0] == "fire":
            st, _ = fire(st, entry[1], entry[2])
        else:
            st, _ = advance(st, entry[1])
    g.refresh_from_db()
    assert g.state == st.to_json()
    assert GameState.from_json(g.state).scores == [s.score for s in g.seats.order_by("number")]
    seqs = list(Event.objects.filter(game=g).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    versions = list(Event.objects.filter(game=g).order_by("seq").values_list("version", flat=True))
    assert versions == sorted(versions) and set(versions) == set(range(1, g.version + 1))


def test_round_state_is_the_end_snapshot_even_when_a_late_sweep_deals_the_next_round(
    users, start_game, fake_clock
):
    """A sweep late enough runs the final turn's timeout, the reveal and the next deal in one
    batch; ``Round.state`` is still the snapshot as the reveal left it (not None, not later)."""
    g = start_game(users[:2], draw_seconds=30)
    caller = first_seat(g)
    fake_clock.advance(5000)
    for _ in range(20):  # play the turn (a King: play it, draw again) until crisp may be called
        kinds = {a["type"] for a in selectors.game_legal_actions(game=g, user=user_at(g, caller))}
        if "call" in kinds:
            break
        kind = next(k for k in ("discard", "king", "draw") if k in kinds)
        action = {"type": "draw", "source": "deck"} if kind == "draw" else {"type": kind}
        act(g, user_at(g, caller), action)
        g.refresh_from_db()
    act(g, user_at(g, caller), {"type": "call"})
    g.refresh_from_db()
    assert g.state["round"]["reveal"] is None
    services.game_sweep(now=clock.to_datetime(fake_clock.ms + 120_000))
    g.refresh_from_db()
    assert g.state["round"]["number"] == 2  # the batch went on into the next round
    rnd = g.rounds.get(number=1)
    assert rnd.result is not None and rnd.state is not None
    end = GameState.from_json(rnd.state)
    assert end.round_number == 1 and end.round.reveal is not None
    assert end.round.reveal["at"] == rnd.result["at"]
    assert end.scores == rnd.result["scores"] and end.history == [rnd.result["round_scores"]]
