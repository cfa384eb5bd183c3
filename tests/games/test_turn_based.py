"""Turn-based games (issue 26): Cribbage and Triple Crown played over days.

The pace is the host's choice (``games.engines.base``: ``pace`` / ``turn_seconds``); a turn-based
game's every move has ``turn_seconds`` and its timeout is the game's own rule (C29, T24), applied
by the same server timers as live: the deadline in the database, the Redis sorted set, the sweep.
Time is the fake clock's (``fake_clock``): a day passes in one ``advance``, so the real menu's
day per move is played here as it is on the site.  People's moves are driven by the test (a
random legal move of the seat awaited), computer players by the real bot path
(``services.game_bot_move`` on what the commit asked to wake).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.urls import reverse

from games import clock, services, timers
from games.engines import engine_for
from games.engines.base import TURN_SECONDS
from games.errors import ServiceError
from games.models import Event, Game, Seat

from .conftest import act, client_for

pytestmark = pytest.mark.django_db

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
TURN_BASED = {"pace": "turn_based", "turn_seconds": 86_400}


def _state(game: Game) -> tuple[Any, Any]:
    game.refresh_from_db()
    engine = engine_for(game.kind)
    return engine, engine.GameState.from_json(game.state)


def _awaited(game: Game, now: int) -> list[int]:
    engine, st = _state(game)
    return engine.awaiting(st, now)["seats"]


def _on_commit(capture: Any, fn: Any) -> Any:
    """Run ``fn`` and then what its commit hands to the live layer (the recorders of
    ``live_calls``: broadcast, timers, computer players to wake), as on the site."""
    if capture is None:
        return fn()
    with capture(execute=True):
        return fn()


def _person_moves(game: Game, seat: int, rng: random.Random, now: int, capture: Any = None) -> None:
    """The person at ``seat`` makes a random legal move, through the service layer."""
    engine, st = _state(game)
    user = Seat.objects.get(game=game, number=seat).user
    action = rng.choice(engine.legal_actions(st, seat, now))
    _on_commit(capture, lambda: act(game, user, action.to_wire()))


def _deadline_ms(game: Game) -> int:
    game.refresh_from_db()
    assert game.next_deadline_at is not None
    return clock.from_datetime(game.next_deadline_at)


def _start(users: list[Any], kind: str, fake_clock: Any, *, bots: int = 0, **extra: Any) -> Game:
    game = services.game_create(host=users[0], kind=kind, settings={**TURN_BASED, **extra})
    for u in users[1:]:
        services.game_join(game=game, user=u, invite_code=game.invite_code)
    for _ in range(bots):
        services.game_add_bot(game=game, host=users[0], level="easy")
    services.game_start(game=game, user=users[0], seed="turn-based")
    game.refresh_from_db()
    return game


def _timeout_by_timer(game: Game, fake_clock: Any, capture: Any = None) -> list[Event]:
    """Let the awaited move's day run out and deliver its timer (the timer path, as live):
    the events that timer added."""
    game.refresh_from_db()
    before = game.last_seq
    (first, *_) = game.deadlines
    fake_clock.ms = first["at"]
    assert _on_commit(
        capture, lambda: services.game_fire_deadline(game_id=game.pk, key=first["key"])
    )
    return list(Event.objects.filter(game=game, seq__gt=before).order_by("seq"))


# ------------------------------------------------------------------------------------------
# Settings: the host's menu, the lobby form, the API
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["cribbage", "triple_crown"])
def test_the_host_menu_offers_the_pace_and_refuses_a_mix(users: list[Any], kind: str) -> None:
    game = services.game_create(host=users[0], kind=kind, settings=TURN_BASED)
    assert game.settings == {"move_seconds": None, **TURN_BASED}
    live = services.game_create(host=users[0], kind=kind)
    assert live.settings == {"move_seconds": None, "pace": "live", "turn_seconds": None}
    for bad in (
        {"pace": "turn_based"},  # no time per move chosen
        {"pace": "turn_based", "turn_seconds": 60},  # not on the menu
        {**TURN_BASED, "move_seconds": 30},  # a live clock in a turn-based game
        {"pace": "live", "turn_seconds": 86_400},
        {"pace": "slow"},
    ):
        with pytest.raises(ServiceError) as info:
            services.game_create(host=users[0], kind=kind, settings=bad)
        assert info.value.code == "bad_settings", bad
    assert Game.objects.count() == 2


@pytest.mark.parametrize("kind", ["cribbage", "triple_crown"])
def test_every_move_of_a_turn_based_game_has_the_turn_s_time(
    users: list[Any], fake_clock: Any, kind: str
) -> None:
    seats = 2 if kind == "cribbage" else 4
    game = _start(users[:seats], kind, fake_clock)
    start = fake_clock.ms
    assert _deadline_ms(game) == start + DAY_MS + 1  # the move's last instant is on time
    fake_clock.advance(5 * HOUR_MS)
    rng = random.Random(1)
    _person_moves(game, _awaited(game, fake_clock.ms)[0], rng, fake_clock.ms)
    if kind == "triple_crown":  # the next card's day starts at the move
        assert _deadline_ms(game) == fake_clock.ms + DAY_MS + 1


def test_the_api_creates_a_turn_based_game_and_documents_the_pace(users: list[Any]) -> None:
    c = client_for(users[0])
    r = c.post("/api/v1/games/", {"kind": "cribbage", "settings": TURN_BASED}, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["settings"]["pace"] == "turn_based"
    assert r.json()["settings"]["turn_seconds"] == 86_400
    r = c.post(
        "/api/v1/games/",
        {"kind": "triple_crown", "settings": {"pace": "turn_based", "turn_seconds": 5}},
        format="json",
    )
    assert r.status_code == 400 and r.json()["code"] == "bad_settings"
    r = c.post(
        "/api/v1/games/vs-computer/",
        {"kind": "triple_crown", "level": "easy", "settings": TURN_BASED},
        format="json",
    )
    assert r.status_code == 201, r.content
    assert r.json()["settings"] == {"move_seconds": None, **TURN_BASED}
    schema = c.get("/api/schema/", {"format": "json"}).json()
    branches = schema["components"]["schemas"]["GameCreateInput"]["properties"]["settings"]["anyOf"]
    paced = [b for b in branches if "pace" in b["properties"]]
    assert len(paced) >= 2
    for b in paced:
        assert b["properties"]["pace"]["enum"] == ["live", "turn_based"]
        assert [v for v in b["properties"]["turn_seconds"]["enum"] if v] == list(TURN_SECONDS)


def test_the_lobby_form_creates_a_turn_based_game_and_cards_say_so(users: list[Any]) -> None:
    web = Client()
    web.force_login(users[0])
    page = web.get(reverse("games:lobby")).content.decode()
    assert 'name="cribbage-pace"' in page and 'name="triple_crown-turn_seconds"' in page
    assert 'data-pace-only="live"' in page  # the live clock's menu, hidden when turn-based
    r = web.post(
        reverse("games:create"),
        {"kind": "cribbage", "cribbage-move_seconds": "", "cribbage-pace": "turn_based",
         "cribbage-turn_seconds": "259200"},
    )  # fmt: skip
    assert r.status_code == 302
    game = Game.objects.get()
    assert game.settings == {"move_seconds": None, "pace": "turn_based", "turn_seconds": 259_200}
    # Live, with the (hidden) turn-based menu still sent by a browser without JavaScript.
    web.post(
        reverse("games:create"),
        {"kind": "triple_crown", "triple_crown-move_seconds": "30", "triple_crown-pace": "live",
         "triple_crown-turn_seconds": "86400"},
    )  # fmt: skip
    live = Game.objects.exclude(pk=game.pk).get()
    assert live.settings == {"move_seconds": 30, "pace": "live", "turn_seconds": None}
    page = web.get(reverse("games:lobby")).content.decode()
    assert "Turn-based · 3 days per move" in page
    assert page.count("Turn-based ·") == 1  # the live game's card shows its own clock


def test_play_against_the_computer_in_turn_based_mode(users: list[Any]) -> None:
    web = Client()
    web.force_login(users[0])
    r = web.post(
        reverse("games:vs-computer"),
        {"kind": "cribbage", "level": "easy", "cribbage-pace": "turn_based",
         "cribbage-turn_seconds": "43200"},
    )  # fmt: skip
    assert r.status_code == 302
    game = Game.objects.get()
    assert game.status == Game.Status.PLAYING
    assert game.settings["pace"] == "turn_based" and game.settings["turn_seconds"] == 43_200


# ------------------------------------------------------------------------------------------
# Whole games
# ------------------------------------------------------------------------------------------
def test_two_people_play_a_whole_cribbage_game_over_days(
    users: list[Any], fake_clock: Any, live_calls: Any
) -> None:
    """Each move comes hours after the last (never within a live game's minute); one move of
    each person runs out its day and the timer applies C29 for them, as live."""
    game = _start(users[:2], "cribbage", fake_clock)
    rng = random.Random(26)
    timeouts: list[Event] = []
    moves = 0
    while game.status == Game.Status.PLAYING:
        fake_clock.advance(rng.randrange(1, 20) * HOUR_MS)  # within the day
        seats = _awaited(game, fake_clock.ms)
        if moves in (3, 40) and seats:
            timeouts += [e for e in _timeout_by_timer(game, fake_clock) if e.data.get("timeout")]
        else:
            _person_moves(game, seats[0], rng, fake_clock.ms)
        moves += 1
        game.refresh_from_db()
        assert moves < 2000
    assert Event.objects.filter(game=game, type="game_over").count() == 1
    assert max(game.state["scores"]) >= 121
    assert len(timeouts) >= 2  # the server moved for the seat whose day ran out
    # One timeout at a time never sits a computer in (two in a row do).
    assert not Seat.objects.filter(game=game, sitting_in=True).exists()
    assert fake_clock.ms - clock.from_datetime(game.started_at) > 7 * DAY_MS


def test_two_people_and_two_computers_play_a_whole_triple_crown_game_over_days(
    users: list[Any], fake_clock: Any, live_calls: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The computers move within their live think time, whatever the day per move; the
    people's moves come hours apart; one of the people's days runs out (T24, by the timer)."""
    oc = django_capture_on_commit_callbacks
    game = _on_commit(oc, lambda: _start(users[:2], "triple_crown", fake_clock, bots=2))
    bot_seats = set(
        Seat.objects.filter(game=game, user__is_bot=True).values_list("number", flat=True)
    )
    assert len(bot_seats) == 2
    _low, high = django_settings.CRISP_BOT_THINK_MS
    rng = random.Random(15)
    steps = timed_out = bot_moves = 0
    while game.status == Game.Status.PLAYING:
        steps += 1
        assert steps < 5000
        game.refresh_from_db()
        woken = [(v, m) for g, v, m in live_calls.bots if g == game.pk and v == game.version]
        live_calls.bots.clear()
        moved = False
        for version, wake in woken:
            for seat, think in wake:
                assert seat in bot_seats and think <= high  # seconds, not the day
                fake_clock.advance(think)
                moved |= _on_commit(
                    oc,
                    lambda s=seat, v=version: services.game_bot_move(
                        game_id=game.pk, seat_number=s, version=v
                    ),
                )
            bot_moves += moved
        game.refresh_from_db()
        if moved or game.status != Game.Status.PLAYING:
            continue
        seats = [s for s in _awaited(game, fake_clock.ms) if s not in bot_seats]
        assert seats, "nobody to move and no computer woken"
        if steps == 10:
            events = _timeout_by_timer(game, fake_clock, oc)
            timed_out += sum(1 for e in events if e.data.get("timeout"))
            continue
        fake_clock.advance(rng.randrange(1, 20) * HOUR_MS)
        _person_moves(game, seats[0], rng, fake_clock.ms, oc)
    assert Event.objects.filter(game=game, type="game_over").count() == 1
    assert max(game.state["scores"]) >= 15
    assert timed_out == 1 and bot_moves > 20


# ------------------------------------------------------------------------------------------
# Timers: once, never stale, across a restart
# ------------------------------------------------------------------------------------------
def test_a_turn_based_deadline_fires_exactly_once_through_the_timer_set(
    users: list[Any], fake_clock: Any, live_calls: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        game = _start(users[:2], "cribbage", fake_clock, turn_seconds=43_200)
    (_game_id, scheduled), *_ = [c for c in live_calls.scheduled if c[0] == game.pk]
    assert {key for key, _due in scheduled} == {d["key"] for d in game.deadlines}
    client = timers.client()
    client.delete(timers.set_key())
    timers.add(client, game.pk, scheduled)
    due = game.deadlines[0]["at"]
    assert due == fake_clock.ms + 43_200_000 + 1
    assert timers.pop_due(client, due - 1, 10)[0] == []  # twelve hours minus one ms: not yet
    popped, _ = timers.pop_due(client, due, 10)
    assert sorted(popped) == sorted((game.pk, d["key"]) for d in game.deadlines)
    assert timers.pop_due(client, due + DAY_MS, 10)[0] == []  # popped once, gone
    fake_clock.ms = due
    fired = [services.game_fire_deadline(game_id=g, key=k) for g, k in popped]
    assert fired.count(True) >= 1
    game.refresh_from_db()
    laid = Event.objects.filter(game=game, type="laid_away", data__timeout=True)
    assert laid.count() == 2  # both seats' lay-away timed out, each once
    version = game.version
    # Delivered again (a duplicate, a retry): nothing more happens.
    assert not any(services.game_fire_deadline(game_id=g, key=k) for g, k in popped)
    game.refresh_from_db()
    assert game.version == version and laid.count() == 2


def test_a_stale_timer_never_acts_on_a_later_turn(
    users: list[Any], fake_clock: Any, live_calls: Any
) -> None:
    game = _start(users[:4], "triple_crown", fake_clock)
    rng = random.Random(3)
    old = game.deadlines[0]["key"]
    fake_clock.advance(20 * HOUR_MS)
    _person_moves(game, _awaited(game, fake_clock.ms)[0], rng, fake_clock.ms)
    game.refresh_from_db()
    version, new = game.version, game.deadlines[0]
    assert new["key"] != old
    fake_clock.advance(DAY_MS)  # the old day is long over; the new one not yet
    assert fake_clock.ms < new["at"]
    assert not services.game_fire_deadline(game_id=game.pk, key=old)
    assert services.game_sweep() == 0
    game.refresh_from_db()
    assert game.version == version
    assert not Event.objects.filter(game=game, data__timeout=True).exists()


def test_a_deadline_missed_by_the_timers_is_applied_by_the_sweep_after_a_restart(
    users: list[Any], fake_clock: Any, live_calls: Any
) -> None:
    """The Redis set lost the entry (emptied, a restart) before it was due: the deadline is
    in the database (``next_deadline_at``), and the sweep applies it, once."""
    game = _start(users[:2], "cribbage", fake_clock)
    client = timers.client()
    client.delete(timers.set_key())  # nothing of this game's is scheduled any more
    at = _deadline_ms(game)
    assert services.game_sweep(now=clock.to_datetime(at - 1)) == 0
    fake_clock.ms = at + 3 * DAY_MS  # the server was down for days
    assert services.game_sweep() == 1
    assert services.game_sweep() == 0
    game.refresh_from_db()
    assert Event.objects.filter(game=game, type="laid_away", data__timeout=True).count() == 2
    # The next deadline is a day from the instant the missed one took effect (C29), so the
    # sweep's lateness costs nobody their day... and it is kept in the database again.
    assert _deadline_ms(game) > at


# ------------------------------------------------------------------------------------------
# Reapers: away by design
# ------------------------------------------------------------------------------------------
def test_a_turn_based_game_whose_players_are_away_is_not_reaped_as_idle(
    users: list[Any], fake_clock: Any, live_calls: Any
) -> None:
    slow = _start(users[:2], "cribbage", fake_clock)
    live = services.game_create(host=users[2], kind="cribbage")
    services.game_join(game=live, user=users[3], invite_code=live.invite_code)
    services.game_start(game=live, user=users[2], seed="live")
    fake_clock.advance(20 * HOUR_MS)
    later = clock.to_datetime(fake_clock.ms)
    assert services.game_reap_idle(now=later, connected=lambda ids: []) == 1
    slow.refresh_from_db()
    live.refresh_from_db()
    assert live.status == Game.Status.ABANDONED  # the live rule is unchanged
    assert slow.status == Game.Status.PLAYING


def test_a_turn_based_lobby_waits_for_its_friends(
    users: list[Any], fake_clock: Any, live_calls: Any
) -> None:
    slow = services.game_create(host=users[0], kind="triple_crown", settings=TURN_BASED)
    live = services.game_create(host=users[1], kind="triple_crown")
    created = clock.from_datetime(slow.updated_at)
    day = clock.to_datetime(created + DAY_MS)
    assert services.game_reap_lobbies(now=day, host_connected=lambda seats: []) == 1
    slow.refresh_from_db()
    live.refresh_from_db()
    assert live.status == Game.Status.ABANDONED and slow.status == Game.Status.LOBBY
    week = clock.to_datetime(created + 7 * DAY_MS)
    assert services.game_reap_lobbies(now=week, host_connected=lambda seats: []) == 1
    slow.refresh_from_db()
    assert slow.status == Game.Status.ABANDONED


# ------------------------------------------------------------------------------------------
# Sitting in across days
# ------------------------------------------------------------------------------------------
def test_a_computer_sits_in_after_two_days_timed_out_and_the_person_is_back_next_day(
    users: list[Any], fake_clock: Any, live_calls: Any, django_capture_on_commit_callbacks: Any
) -> None:
    oc = django_capture_on_commit_callbacks
    game = _start(users[:4], "triple_crown", fake_clock)
    rng = random.Random(7)
    away = _awaited(game, fake_clock.ms)[0]
    _low, high = django_settings.CRISP_BOT_THINK_MS

    def others_until_away_is_awaited() -> None:
        while _awaited(game, fake_clock.ms) != [away]:
            fake_clock.advance(2 * HOUR_MS)
            _person_moves(game, _awaited(game, fake_clock.ms)[0], rng, fake_clock.ms, oc)

    # Two of the absent person's moves in a row time out, a day each; the others play on.
    for n in range(2):
        events = _timeout_by_timer(game, fake_clock, oc)
        assert [e.data["seat"] for e in events if e.data.get("timeout")] == [away]
        if n == 0:
            others_until_away_is_awaited()
    seat = Seat.objects.get(game=game, number=away)
    assert seat.sitting_in and seat.missed == 2
    assert Event.objects.filter(game=game, type="sitting_in", data__seat=away).count() == 1
    # Whenever the seat is awaited now, its computer is woken within seconds, not a day.
    others_until_away_is_awaited()
    game.refresh_from_db()
    woken = [m for g, v, m in live_calls.bots if g == game.pk and v == game.version]
    assert woken and all(s == away and think <= high for s, think in woken[-1])
    before = Event.objects.filter(game=game, data__seat=away).count()
    fake_clock.advance(woken[-1][0][1])
    assert _on_commit(
        oc,
        lambda: services.game_bot_move(game_id=game.pk, seat_number=away, version=game.version),
    )
    assert Event.objects.filter(game=game, data__seat=away).count() > before
    # The next day the person is back ("I'm back") and moves themselves again.
    fake_clock.advance(DAY_MS - HOUR_MS)
    person = Seat.objects.get(game=game, number=away).user
    services.game_back(game=game, user=person)
    seat.refresh_from_db()
    assert (seat.sitting_in, seat.missed) == (False, 0)
    assert Event.objects.filter(game=game, type="seat_back", data__seat=away).count() == 1
    others_until_away_is_awaited()
    before = Event.objects.filter(game=game, data__seat=away).count()
    _person_moves(game, away, rng, fake_clock.ms, oc)
    assert Event.objects.filter(game=game, data__seat=away).count() > before
    game.refresh_from_db()
    assert game.status == Game.Status.PLAYING
