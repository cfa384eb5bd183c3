"""Computer players in the product: seated like people, moving through the service layer.

The bots themselves (levels, search, strength) are tested in tests/bots/; here: the seats,
"play against the computer", a person's seat sat in after two timeouts and taken back, the
fairness of what the driver hands a bot, and bots-only play to the end.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import transaction
from django.test import Client

from games import bots, selectors, services
from games.engines import engine_for
from games.errors import ServiceError
from games.models import Event, Game, Seat

from .conftest import client_for


def _run_bots(game: Game, live_calls: Any, fake_clock: Any, *, limit: int = 3000) -> Game:
    """Play the woken bots (and every deadline) until the game ends or ``limit`` steps."""
    done = 0
    for _ in range(limit):
        game.refresh_from_db()
        if game.status != Game.Status.PLAYING:
            break
        pending = [(g, v, m) for g, v, m in live_calls.bots if g == game.pk and v == game.version]
        live_calls.bots.clear()
        moved = False
        for _, version, moves in pending:
            for seat, think in moves:
                fake_clock.advance(think)
                moved |= services.game_bot_move(game_id=game.pk, seat_number=seat, version=version)
                done += 1
                if moved:
                    break
            if moved:
                break
        if not moved:
            fake_clock.advance(1000)
            services.game_sweep()
            if not live_calls.bots:
                services.game_wake_bots(idle_ms=0)
    game.refresh_from_db()
    return game


@pytest.fixture
def same_play(settings: Any) -> None:
    """A game of bots plays the same way on every run: each decision's generator seeded and
    one think time (the service draws both at random otherwise).  With ``_vs_computer``'s
    seeded deal, "the game ends within N steps" is then a fact of that game, not a chance."""
    settings.CRISP_BOT_SEED = "botplay"
    settings.CRISP_BOT_THINK_MS = (1000, 1000)


def _vs_computer(
    user: Any, *, kind: str, level: str, opponents: int, settings: dict[str, Any], seed: str
) -> Game:
    """``services.game_vs_computer``'s game (one transaction: a private game, ``opponents``
    bots of ``level``, started), dealt from ``seed``: the deal is the one input the service
    draws from ``secrets``.  ``test_vs_computer_seats_bots_and_starts`` covers the service."""
    with transaction.atomic():
        game = services.game_create(host=user, kind=kind, settings=settings, private=True)
        for _ in range(opponents):
            services.game_add_bot(game=game, host=user, level=level)
        return services.game_start(game=game, user=user, seed=seed)


def test_vs_computer_seats_bots_and_starts(users: list[Any], fake_clock: Any) -> None:
    game = services.game_vs_computer(user=users[0], kind="crisp", level="easy", opponents=2)
    assert game.status == Game.Status.PLAYING and game.private
    seats = list(Seat.objects.filter(game=game).order_by("number").select_related("user"))
    assert [s.user.is_bot for s in seats] == [False, True, True]
    assert [s.bot_level for s in seats] == ["", "easy", "easy"]
    assert len({s.user_id for s in seats}) == 3
    detail = selectors.game_detail(game=game, user=users[0])
    assert [s["bot"] for s in detail["seats"]] == [None, "easy", "easy"]


@pytest.mark.parametrize(
    ("kw", "code"),
    [
        ({"kind": "crisp", "opponents": 8}, "bad_opponents"),
        ({"kind": "crisp", "opponents": 0}, "bad_opponents"),
        ({"kind": "crisp", "level": "godlike"}, "bad_level"),
        ({"kind": "chess"}, "bad_kind"),
    ],
)
def test_vs_computer_refusals_change_nothing(users: list[Any], kw: dict, code: str) -> None:
    with pytest.raises(ServiceError) as info:
        services.game_vs_computer(user=users[0], **kw)
    assert info.value.code == code and 400 <= info.value.status < 500
    assert not Game.objects.exists()


def test_only_the_host_adds_bots_in_the_lobby_up_to_the_seat_limit(users: list[Any]) -> None:
    game = services.game_create(host=users[0], kind="crisp")
    with pytest.raises(ServiceError) as info:
        services.game_add_bot(game=game, host=users[1], level="easy")
    assert info.value.code == "not_host"
    for _ in range(engine_for("crisp").MAX_SEATS - 1):
        services.game_add_bot(game=game, host=users[0], level="hard")
    with pytest.raises(ServiceError) as info:
        services.game_add_bot(game=game, host=users[0], level="hard")
    assert info.value.code == "game_full"
    body = client_for(users[0]).get(f"/api/v1/games/{game.pk}/").json()
    assert [s["bot"] for s in body["seats"]][1:] == ["hard"] * 7


def test_bots_play_a_whole_game_through_the_service_layer(
    users: list[Any], live_calls: Any, fake_clock: Any, same_play: None
) -> None:
    """A person and two bots; the person never moves: after two timeouts a bot sits in for
    them, and the three computers finish the game."""
    game = _vs_computer(
        users[0], kind="crisp", level="medium", opponents=2,
        settings={"target_score": 50, "draw_seconds": 30}, seed="botplay-whole",
    )  # fmt: skip
    # A seeded deal and seeded bots (``same_play``): when the deal was random, CI met a game
    # still playing after 3,000 steps (nothing wrong); the loop stops as soon as it ends.
    game = _run_bots(game, live_calls, fake_clock, limit=20_000)
    assert game.status == Game.Status.FINISHED, f"still {game.status} at v{game.version}"
    me = Seat.objects.get(game=game, number=0)
    assert me.sitting_in and me.bot_level == services.SIT_IN_LEVEL
    sat = Event.objects.filter(game=game, type="sitting_in")
    assert [e.data["seat"] for e in sat] == [0]
    # Who really played: the bots' own moves carry their seats; the person's seat's moves
    # after the sit-in are in the log as that seat's, and the sit-in event says from when.
    assert Event.objects.filter(game=game, type="game_over").count() == 1


def test_im_back_takes_the_seat_back(
    users: list[Any], live_calls: Any, fake_clock: Any, same_play: None
) -> None:
    game = _vs_computer(
        users[0], kind="crisp", level="easy", opponents=1,
        settings={"target_score": 150, "draw_seconds": 30}, seed="botplay-back",
    )  # fmt: skip
    for _ in range(400):
        fake_clock.advance(5000)
        services.game_sweep()
        for g, v, moves in list(live_calls.bots):
            for seat, _think in moves:
                services.game_bot_move(game_id=g, seat_number=seat, version=v)
        live_calls.bots.clear()
        if Seat.objects.get(game=game, number=0).sitting_in:
            break
    assert Seat.objects.get(game=game, number=0).sitting_in
    with pytest.raises(ServiceError) as info:
        services.game_back(game=game, user=users[1])
    assert info.value.code == "not_seated"
    body = client_for(users[0]).post(f"/api/v1/games/{game.pk}/back/").json()
    assert body["seats"][0]["sitting_in"] is False
    seat = Seat.objects.get(game=game, number=0)
    assert (seat.sitting_in, seat.bot_level, seat.missed) == (False, "", 0)
    with pytest.raises(ServiceError) as info:
        services.game_back(game=game, user=users[0])
    assert info.value.code == "not_sat_in"


def test_a_player_who_left_for_good_is_offered_no_im_back(users: list[Any]) -> None:
    """A computer plays the seat of a player who left a game in progress to the end; "I'm
    back" is refused them (``already_left``), so neither the page nor the game's card offers
    it: the card says ``left``, the page leaves the banner hidden."""
    game = services.game_create(host=users[0], kind="crisp")
    services.game_join(game=game, user=users[1])
    services.game_join(game=game, user=users[2])
    services.game_start(game=game, user=users[0])
    services.game_leave_playing(game=game, user=users[1])
    card = client_for(users[1]).get(f"/api/v1/games/{game.pk}/").json()
    assert (card["seats"][1]["sitting_in"], card["seats"][1]["left"]) == (True, True)
    assert card["seats"][0]["left"] is False
    browser = Client()
    browser.force_login(users[1])
    page = browser.get(f"/games/{game.pk}/")
    assert page.status_code == 200
    banner = re.search(r'<form [^>]*id="sitin-form"[^>]*>', page.content.decode())
    assert banner and " hidden" in banner.group(0)
    with pytest.raises(ServiceError) as info:
        services.game_back(game=game, user=users[1])
    assert info.value.code == "already_left"


def test_a_bot_is_handed_only_its_seats_redacted_payloads(
    users: list[Any], live_calls: Any, fake_clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fairness at the seam: everything ``game_bot_move`` gives the bot is exactly what the
    seat's socket was sent (the selectors' redacted forms), never the stored truth."""
    seen: list[tuple[int, Any, list[Any]]] = []
    original = bots.Memory.observe

    def spy(self: Any, *, view: Any = None, events: Any = ()) -> None:
        events = list(events)
        seen.append((self.seat, view, events))
        original(self, view=view, events=events)

    monkeypatch.setattr(bots.Memory, "observe", spy)
    game = services.game_vs_computer(
        user=users[0], kind="crisp", level="medium", opponents=3,
        settings={"target_score": 50, "draw_seconds": 30},
    )  # fmt: skip
    _run_bots(game, live_calls, fake_clock, limit=150)
    assert seen
    engine = engine_for("crisp")
    game.refresh_from_db()
    for seat, view, events in seen:
        assert seat != 0 or Seat.objects.get(game=game, number=0).sitting_in
        for ev in events:
            if "seq" not in ev:  # a stored memory replayed into itself (already checked)
                continue
            stored = Event.objects.get(game=game, seq=ev["seq"])
            if stored.origin == Event.Origin.ENGINE:
                redacted = engine.event_view(engine.Event(stored.type, stored.data), seat)
                assert ev["data"] == redacted["data"]
        if view is not None:
            assert view["seat"] == seat and "seed" not in view and "deck" not in view


def test_a_game_without_computer_players_refuses_them(
    users: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bots, "GAMES", {k: v for k, v in bots.GAMES.items() if k != "crisp"})
    with pytest.raises(ServiceError) as info:
        services.game_vs_computer(user=users[0], kind="crisp")
    assert info.value.code == "no_computer_players"
    game = services.game_create(host=users[0], kind="crisp")
    with pytest.raises(ServiceError) as info:
        services.game_add_bot(game=game, host=users[0], level="easy")
    assert info.value.code == "no_computer_players"


def _shortest_game(engine: Any) -> dict[str, Any]:
    """The smallest end score the game's settings offer (``{}`` when it offers no choice)."""
    target = engine.SETTINGS_SCHEMA["properties"].get("target_score")
    return {"target_score": min(target["enum"])} if target and "enum" in target else {}


@pytest.mark.parametrize("kind", sorted(bots.GAMES))
def test_every_game_plays_to_its_end_against_the_computer(
    kind: str, users: list[Any], live_calls: Any, fake_clock: Any, same_play: None
) -> None:
    """One person who never moves and the computer: the person's seat is sat in for after two
    timeouts, and the computers finish the game through the service layer."""
    engine = engine_for(kind)
    timer = (
        "draw_seconds"
        if "draw_seconds" in engine.SETTINGS_SCHEMA["properties"]
        else ("move_seconds")
    )
    opponents = max(engine.MIN_SEATS - 1, min(3, engine.MAX_SEATS - 1))  # the service's default
    # The shortest game a table may choose where the game lets it choose (Crisp's end score
    # 50, not 100): "to its end" is the same claim, at half the service calls.
    short = _shortest_game(engine)
    game = _vs_computer(
        users[0], kind=kind, level="easy", opponents=opponents, settings={timer: 30, **short},
        seed=f"botplay-end-{kind}",
    )  # fmt: skip
    game = _run_bots(game, live_calls, fake_clock, limit=6000)
    assert game.status == Game.Status.FINISHED, (kind, game.version)
    assert Seat.objects.get(game=game, number=0).sitting_in
