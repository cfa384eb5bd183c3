"""The game-night services: naming a game, rematch, table chat, leaving a game in progress,
and ending games nobody plays (games/services.py, its last section)."""

from __future__ import annotations

import sys

import pytest

from games import clock, services
from games.errors import ServiceError
from games.models import ChatMessage, Event, Game

from .conftest import act

pytestmark = pytest.mark.django_db


# --- names -------------------------------------------------------------------------------------
def test_the_host_names_the_game(users):
    g = services.game_create(host=users[0])
    services.game_rename(game=g, user=users[0], name="  Friday   cards ")
    g.refresh_from_db()
    assert g.name == "Friday cards"
    assert Event.objects.filter(game=g, type="game_renamed").get().data == {"name": "Friday cards"}
    with pytest.raises(ServiceError) as info:
        services.game_rename(game=g, user=users[1], name="mine")
    assert info.value.code == "not_host"
    with pytest.raises(ServiceError) as info:
        services.game_rename(game=g, user=users[0], name="x" * 61)
    assert info.value.code == "bad_name"


# --- rematch -----------------------------------------------------------------------------------
def test_rematch_copies_the_settings_and_seats_those_who_accept(users, start_game, staff):
    g = start_game(users[:3], target_score=150, draw_seconds=45, pile_draw=True, private=True)
    services.game_end_now(game=g, user=staff)
    new = services.game_rematch(game=g, user=users[1])
    assert (new.kind, new.private) == (g.kind, True)
    assert new.settings == {
        "target_score": 150,
        "draw_seconds": 45,
        "pile_draw": True,
        "pace": "live",
        "turn_seconds": None,
    }
    assert new.status == Game.Status.LOBBY and new.host == users[1] and new.rematch_of_id == g.pk
    assert new.invite_code != g.invite_code
    offer = Event.objects.filter(game=g, type="rematch_offered").get()
    assert offer.data == {"game_id": new.pk, "by": users[1].pk}
    # Another player accepts (no invite code needed: they played); asking twice is harmless.
    assert services.game_rematch(game=g, user=users[0]).pk == new.pk
    assert services.game_rematch(game=g, user=users[0]).pk == new.pk
    assert [s.user for s in new.seats.order_by("number")] == [users[1], users[0]]
    # users[2] does not accept: the third seat is open to whoever has the new code.
    services.game_join(game=new, user=users[3], invite_code=new.invite_code)
    assert new.seats.count() == 3


def test_rematch_refusals(users, start_game, staff):
    g = start_game(users[:2])
    with pytest.raises(ServiceError) as info:
        services.game_rematch(game=g, user=users[0])
    assert info.value.code == "not_finished"
    services.game_end_now(game=g, user=staff)
    with pytest.raises(ServiceError) as info:
        services.game_rematch(game=g, user=users[5])
    assert info.value.code == "not_seated"
    new = services.game_rematch(game=g, user=users[0])
    services.game_join(game=new, user=users[4])
    services.game_start(game=new, user=users[0])
    with pytest.raises(ServiceError) as info:
        services.game_rematch(game=g, user=users[1])  # too late: it started without them
    assert info.value.code == "game_started"


# --- chat --------------------------------------------------------------------------------------
def test_chat_is_kept_with_the_game_and_announced(users, start_game, monkeypatch,
                                                  django_capture_on_commit_callbacks):  # fmt: skip
    g = start_game(users[:2])
    sent = []
    monkeypatch.setattr(sys.modules["games.broadcast"], "chat_posted",
                        lambda game_id, pk: sent.append((game_id, pk)), raising=False)  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        m = services.game_chat_post(game=g, user=users[0], text="<script>alert(1)</script>  hi")
    assert m.text == "<script>alert(1)</script> hi"  # kept as typed; escaped where shown
    assert (m.seat, sent) == (0, [(g.pk, m.pk)])
    # A spectator of a public game may chat too; their seat is None.
    assert services.game_chat_post(game=g, user=users[5], text="good luck").seat is None


def test_chat_limits(users, start_game, fake_clock):
    g = start_game(users[:2], private=True)
    for bad in ("", "   ", "x" * 201, 5):
        with pytest.raises(ServiceError) as info:
            services.game_chat_post(game=g, user=users[0], text=bad)
        assert info.value.code == "bad_chat"
    for i in range(services.CHAT_BURST):
        services.game_chat_post(game=g, user=users[0], text=f"line {i}")
    with pytest.raises(ServiceError) as info:
        services.game_chat_post(game=g, user=users[0], text="one more")
    assert (info.value.code, info.value.status) == ("rate_limited", 429)
    services.game_chat_post(game=g, user=users[1], text="others may still talk")
    fake_clock.advance(services.CHAT_WINDOW_MS + 1)
    services.game_chat_post(game=g, user=users[0], text="after a pause")
    # Nobody outside a private game can post to it (or learn that it exists).
    with pytest.raises(ServiceError) as info:
        services.game_chat_post(game=g, user=users[5], text="hello?")
    assert info.value.code == "not_found"
    assert ChatMessage.objects.filter(game=g).count() == services.CHAT_BURST + 2


# --- leaving a game in progress, and games nobody plays -------------------------------------
def test_leaving_a_game_in_progress(users, start_game):
    g = start_game(users[:3])
    services.game_leave_playing(game=g, user=users[1])
    assert g.seats.get(user=users[1]).left_at is not None
    assert Event.objects.filter(game=g, type="player_left").get().data["seat"] == 1
    with pytest.raises(ServiceError) as info:
        services.game_leave_playing(game=g, user=users[1])
    assert info.value.code == "already_left"
    services.game_leave_playing(game=g, user=users[0])
    g.refresh_from_db()
    assert g.status == Game.Status.PLAYING  # one player is still there
    services.game_leave_playing(game=g, user=users[2])
    g.refresh_from_db()
    assert g.status == Game.Status.ABANDONED and g.state is not None  # the state is kept
    reason = Event.objects.filter(game=g, type="game_abandoned").get().data["reason"]
    assert reason == "everyone_left"
    assert g.next_deadline_at is None


def test_games_nobody_plays_end_as_abandoned(users, start_game, fake_clock):
    quiet = start_game(users[:2], draw_seconds=30)
    busy = start_game(users[2:4])
    watched = start_game(users[4:6])
    fake_clock.advance(services.IDLE_MS - 60_000)
    act(busy, users[2], {"type": "look"}, expected_version=None)  # someone plays here
    fake_clock.advance(120_000)
    connected = lambda ids: {watched.pk} & set(ids)  # noqa: E731 - a player is online there
    assert services.game_reap_idle(connected=connected) == 1
    for g in (quiet, busy, watched):
        g.refresh_from_db()
    assert quiet.status == Game.Status.ABANDONED and quiet.state is not None
    assert (busy.status, watched.status) == (Game.Status.PLAYING, Game.Status.PLAYING)
    data = Event.objects.filter(game=quiet, type="game_abandoned").get().data
    assert data == {"reason": "idle", "idle_ms": services.IDLE_MS}
    # Time as the service layer sees it: nothing more is idle yet, later the busy game is.
    assert services.game_reap_idle(connected=connected) == 0
    later = clock.to_datetime(fake_clock.ms + services.IDLE_MS)
    assert services.game_reap_idle(now=later, connected=connected) == 1
