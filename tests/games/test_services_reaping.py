"""Lobbies and games that end, and the rematch that keeps the table (issue 24, items 4 and 5):
``services.game_reap_lobbies``, ``game_reap_idle``'s setting, ``game_rematch`` against the
computer, the open list and the online count.  Time is the fake clock's: nothing sleeps."""

from __future__ import annotations

from typing import Any

import pytest

from games import presence, services, tasks
from games.models import Event, Game

from .conftest import client_for

pytestmark = pytest.mark.django_db

AWAY, IDLE, REMATCH = services.LOBBY_HOST_AWAY_MS, services.LOBBY_IDLE_MS, services.REMATCH_LOBBY_MS


def _status(g: Game) -> str:
    g.refresh_from_db()
    return g.status


def _closed_reason(g: Game) -> dict[str, Any]:
    return Event.objects.filter(game=g, type="game_abandoned").get().data


def _nobody(_seats: dict[int, int]) -> set[int]:
    return set()


# --- lobbies nobody will start -----------------------------------------------------------------
def test_a_lobby_whose_host_is_gone_closes_after_the_documented_time(
    users, fake_clock, live_calls, django_capture_on_commit_callbacks
):
    gone = services.game_create(host=users[0])
    here = services.game_create(host=users[1])
    services.game_join(game=here, user=users[2])  # the host is seat 0, users[2] seat 1
    hosts_seen: list[dict[int, int]] = []

    def connected(host_seats: dict[int, int]) -> set[int]:
        hosts_seen.append(dict(host_seats))
        return {here.pk}

    fake_clock.advance(AWAY - 1)
    assert services.game_reap_lobbies(host_connected=connected) == 0
    fake_clock.advance(1)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.game_reap_lobbies(host_connected=connected) == 1
    assert hosts_seen[-1] == {gone.pk: 0, here.pk: 0}
    assert (_status(gone), _status(here)) == (Game.Status.ABANDONED, Game.Status.LOBBY)
    assert _closed_reason(gone) == {"reason": "host_gone", "after_ms": AWAY}
    assert gone.ended_at is not None
    assert (gone.pk, gone.version) in live_calls.changed  # broadcast on commit
    # Only the host counts: another player connected does not keep a hostless lobby open.
    assert services.game_reap_lobbies(host_connected=lambda s: set()) == 1
    assert _closed_reason(here)["reason"] == "host_gone"


def test_a_lobby_untouched_for_the_idle_time_closes_even_with_its_host_online(users, fake_clock):
    g = services.game_create(host=users[0])
    always = lambda seats: set(seats)  # noqa: E731 - every host is online
    fake_clock.advance(IDLE - 1)
    assert services.game_reap_lobbies(host_connected=always) == 0
    fake_clock.advance(1)
    assert services.game_reap_lobbies(host_connected=always) == 1
    assert _closed_reason(g) == {"reason": "idle", "after_ms": IDLE}


def test_the_reaper_is_idempotent_and_skips_a_lobby_someone_joined_meanwhile(users, fake_clock):
    joined = services.game_create(host=users[0])
    left_alone = services.game_create(host=users[1])
    fake_clock.advance(AWAY)

    def someone_joins(host_seats: dict[int, int]) -> set[int]:
        # Between the reaper's first look and its row lock, a player takes a seat.
        services.game_join(game=joined, user=users[2])
        return set()

    assert services.game_reap_lobbies(host_connected=someone_joins) == 1
    assert (_status(joined), _status(left_alone)) == (Game.Status.LOBBY, Game.Status.ABANDONED)
    # Run again at once: nothing more closes, and the closed lobby gets no second event.
    assert services.game_reap_lobbies(host_connected=_nobody) == 0
    assert Event.objects.filter(game=left_alone, type="game_abandoned").count() == 1
    # The joined lobby's clock started again at the join.
    fake_clock.advance(AWAY)
    assert services.game_reap_lobbies(host_connected=_nobody) == 1
    assert _status(joined) == Game.Status.ABANDONED


def test_the_times_are_settings(users, start_game, fake_clock, settings):
    settings.CRISP_LOBBY_HOST_AWAY_SECONDS = 10
    settings.CRISP_IDLE_GAME_SECONDS = 20
    lobby = services.game_create(host=users[0])
    game = start_game(users[1:3])
    fake_clock.advance(10_000)
    assert services.game_reap_lobbies(host_connected=_nobody) == 1
    assert _closed_reason(lobby) == {"reason": "host_gone", "after_ms": 10_000}
    assert services.game_reap_idle(connected=lambda ids: set()) == 0
    fake_clock.advance(10_000)
    assert services.game_reap_idle(connected=lambda ids: set()) == 1
    assert _closed_reason(game) == {"reason": "idle", "idle_ms": 20_000}


def test_an_untimed_game_with_nobody_connected_ends_but_not_one_with_a_player_online(
    users, start_game, fake_clock
):
    """Untimed: no deadline would ever end it; only the reaper does."""
    quiet = start_game(users[:4], kind="triple_crown")
    online = start_game(users[4:8], kind="triple_crown")
    fake_clock.advance(services.IDLE_MS)
    assert services.game_reap_idle(connected=lambda ids: {online.pk} & set(ids)) == 1
    assert (_status(quiet), _status(online)) == (Game.Status.ABANDONED, Game.Status.PLAYING)


def test_a_rematch_lobby_nobody_joins_does_not_linger(users, start_game, staff, fake_clock):
    alone_g = start_game(users[:2])
    joined_g = start_game(users[2:4])
    for g in (alone_g, joined_g):
        services.game_end_now(game=g, user=staff)
    alone = services.game_rematch(game=alone_g, user=users[0])
    joined = services.game_rematch(game=joined_g, user=users[2])
    services.game_join(game=joined, user=users[5])  # a third, not the old opponent: no start
    online = lambda seats: set(seats)  # noqa: E731 - both hosts are still at their tables
    fake_clock.advance(REMATCH)
    assert services.game_reap_lobbies(host_connected=online) == 1
    assert _closed_reason(alone) == {"reason": "rematch_not_taken", "after_ms": REMATCH}
    assert _status(joined) == Game.Status.LOBBY
    # A rematch lobby the other player accepts too starts; nothing is left to close.
    assert services.game_rematch(game=joined_g, user=users[3]).status == Game.Status.PLAYING


# --- rematch keeps the table -------------------------------------------------------------------
def test_rematch_against_the_computer_keeps_the_computer_players_and_their_levels(
    users, staff, fake_clock
):
    g = services.game_create(
        host=users[0], kind="crisp", settings={"target_score": 100}, private=True
    )
    for level in ("easy", "hard", "medium"):
        services.game_add_bot(game=g, host=users[0], level=level)
    services.game_start(game=g, user=users[0])
    services.game_end_now(game=g, user=staff)
    new = services.game_rematch(game=g, user=users[0])  # one click
    assert new.status == Game.Status.PLAYING and new.rematch_of_id == g.pk
    assert (new.kind, new.settings, new.private) == (g.kind, g.settings, True)
    seats = list(new.seats.select_related("user").order_by("number"))
    assert seats[0].user == users[0]
    assert [(s.user.is_bot, s.bot_level) for s in seats[1:]] == [
        (True, "easy"),
        (True, "hard"),
        (True, "medium"),
    ]
    old_bots = list(g.seats.filter(user__is_bot=True).order_by("number").values_list("user_id"))
    assert list(new.seats.filter(user__is_bot=True).order_by("number").values_list("user_id")) == (
        old_bots
    )
    # Asking again is harmless: the same game.
    assert services.game_rematch(game=g, user=users[0]).pk == new.pk


def test_rematch_of_two_people_and_a_computer_starts_at_the_second_click(users, staff):
    g = services.game_vs_computer(user=users[0], kind="crisp", level="easy", opponents=1)
    services.game_end_now(game=g, user=staff)
    assert services.game_rematch(game=g, user=users[0]).status == Game.Status.PLAYING

    table = services.game_create(host=users[1], kind="crisp")
    services.game_join(game=table, user=users[2])
    services.game_add_bot(game=table, host=users[1], level="hard")
    services.game_start(game=table, user=users[1])
    services.game_end_now(game=table, user=staff)
    first = services.game_rematch(game=table, user=users[2])
    assert first.status == Game.Status.LOBBY and first.host == users[2]
    assert [s.bot_level for s in first.seats.order_by("number")] == ["", "hard"]
    second = services.game_rematch(game=table, user=users[1])
    assert second.pk == first.pk and second.status == Game.Status.PLAYING


# --- what the lobby lists, and who is online ---------------------------------------------------
def test_the_open_list_leaves_out_full_lobbies(users):
    full = services.game_create(host=users[0], kind="cribbage")
    services.game_join(game=full, user=users[1])
    room = services.game_create(host=users[2], kind="cribbage")
    closed = services.game_create(host=users[3])
    services.game_leave(game=closed, user=users[3])  # the last one out: abandoned
    ids = [g["id"] for g in client_for(users[5]).get("/api/v1/games/?scope=open").json()]
    assert room.pk in ids and full.pk not in ids and closed.pk not in ids


def test_the_lobby_page_shows_how_many_people_are_online(client, users, redis_client):
    redis_client.delete(presence._online_key())
    client.force_login(users[0])
    page = client.get("/games/").content.decode()
    assert "1 person online" in page  # the viewer
    presence.seen_online(presence.person_of(users[1], ""))
    presence.seen_online("cspectator-socket", seconds=-1)  # already gone: not counted
    page = client.get("/games/").content.decode()
    assert "2 people online" in page
    assert presence.online_count() == 2


def test_lobbies_with_host_reads_the_host_seat_from_presence(redis_client):
    """The sweep's presence check (the consumer's side is tests/live/test_consumer.py)."""
    now_ms = presence._now_ms()
    redis_client.delete(presence._key(990_001), presence._key(990_002))
    redis_client.zadd(presence._key(990_001), {"1|chan-a": now_ms + 30_000})
    redis_client.zadd(presence._key(990_002), {"0|chan-b": now_ms - 1})  # expired
    try:
        assert tasks.lobbies_with_host({990_001: 1, 990_002: 0}) == {990_001}
        assert tasks.lobbies_with_host({990_001: 0}) == set()
        assert tasks.games_with_players([990_001, 990_002]) == {990_001}
    finally:
        redis_client.delete(presence._key(990_001), presence._key(990_002))


def test_a_lobby_its_last_person_leaves_closes_even_with_computer_players_seated(users):
    """A computer player cannot host: the host role is never passed to one."""
    g = services.game_create(host=users[0])
    services.game_add_bot(game=g, host=users[0], level="easy")
    services.game_leave(game=g, user=users[0])
    assert _status(g) == Game.Status.ABANDONED
    assert _closed_reason(g) == {"reason": "empty"}


def test_a_leaving_host_hands_the_lobby_to_a_person_not_a_computer_player(users):
    g = services.game_create(host=users[0])
    services.game_add_bot(game=g, host=users[0], level="easy")  # seat 1
    services.game_join(game=g, user=users[1])  # seat 2
    services.game_leave(game=g, user=users[0])
    g.refresh_from_db()
    assert g.status == Game.Status.LOBBY and g.host == users[1]
