"""The lobby services: create, join, leave, kick, start, abandon, end now -- and their refusals."""

from __future__ import annotations

import pytest

from games import services
from games.errors import ServiceError
from games.models import Event, Game, Round, Seat


def codes(game: Game) -> list[str]:
    return list(Event.objects.filter(game=game).order_by("seq").values_list("type", flat=True))


def refused(code: str, fn, **kw) -> ServiceError:
    with pytest.raises(ServiceError) as info:
        fn(**kw)
    assert info.value.code == code, info.value
    return info.value


def test_create_seats_the_host_and_bumps_version(users):
    g = services.game_create(
        host=users[0], settings={"target_score": 150, "draw_seconds": 45, "pile_draw": True}
    )
    assert (g.kind, g.status, g.version) == ("crisp", "lobby", 1)
    assert g.settings == {
        "target_score": 150,
        "draw_seconds": 45,
        "pile_draw": True,
        "pace": "live",
        "turn_seconds": None,
    }
    assert list(g.seats.values_list("number", "user")) == [(0, users[0].pk)]
    assert codes(g) == ["game_created", "seat_joined"]
    assert len(g.invite_code) == 8


def test_create_fills_the_engines_defaults(users):
    g = services.game_create(host=users[0], settings={"draw_seconds": 30})
    assert g.settings == {
        "target_score": 100,
        "draw_seconds": 30,
        "pile_draw": False,
        "pace": "live",
        "turn_seconds": None,
    }


@pytest.mark.parametrize(
    "kw",
    [
        {"settings": {"target_score": 75}},
        {"settings": {"target_score": True}},
        {"settings": {"draw_seconds": 10}},
        {"settings": {"draw_seconds": False}},
        {"settings": {"pile_draw": "yes"}},
        {"settings": {"window_ms": 10}},  # a test-only timer is not on the host's menu
        {"settings": ["target_score"]},
        {"private": 1},
    ],
)
def test_create_refuses_bad_settings(users, kw):
    refused("bad_settings", services.game_create, host=users[0], **kw)
    assert not Game.objects.exists()


@pytest.mark.parametrize("kind", ["chess", "", None, 3])
def test_create_refuses_an_unknown_kind(users, kind):
    refused("bad_kind", services.game_create, host=users[0], kind=kind)
    assert not Game.objects.exists()


def test_join_fills_seats_in_order_and_refuses_full_and_twice(users, make_user):
    g = services.game_create(host=users[0])
    for u in users[1:8]:
        services.game_join(game=g.pk, user=u)
    assert list(g.seats.order_by("number").values_list("number", flat=True)) == list(range(8))
    g.refresh_from_db()
    v = g.version
    refused("game_full", services.game_join, game=g, user=make_user())
    refused("already_joined", services.game_join, game=g, user=users[3])
    g.refresh_from_db()
    assert g.version == v


def test_private_game_needs_its_code(users):
    g = services.game_create(host=users[0], private=True)
    refused("not_found", services.game_join, game=g, user=users[1])
    refused("not_found", services.game_join, game=g, user=users[1], invite_code="WRONG")
    services.game_join(game=g, user=users[1], invite_code=g.invite_code.lower())
    assert g.seats.count() == 2


def test_join_unknown_game(users):
    refused("not_found", services.game_join, game=999999, user=users[0])


def test_leave_renumbers_and_passes_host(users):
    g = services.game_create(host=users[0])
    for u in users[1:4]:
        services.game_join(game=g, user=u)
    services.game_leave(game=g, user=users[1])
    assert list(g.seats.order_by("number").values_list("user", flat=True)) == [
        users[0].pk,
        users[2].pk,
        users[3].pk,
    ]
    services.game_leave(game=g, user=users[0])
    g.refresh_from_db()
    assert g.host == users[2]
    assert list(g.seats.order_by("number").values_list("number", "user")) == [
        (0, users[2].pk),
        (1, users[3].pk),
    ]
    assert codes(g)[-2:] == ["seat_left", "host_changed"]
    assert refused("not_seated", services.game_leave, game=g, user=users[0]).status == 403


def test_last_one_out_abandons(users):
    g = services.game_create(host=users[0])
    services.game_leave(game=g, user=users[0])
    g.refresh_from_db()
    assert g.status == "abandoned"


def test_kick(users):
    g = services.game_create(host=users[0])
    services.game_join(game=g, user=users[1])
    services.game_join(game=g, user=users[2])
    refused("not_host", services.game_kick, game=g, host=users[1], seat_number=2)
    refused("cannot_kick_self", services.game_kick, game=g, host=users[0], seat_number=0)
    refused("no_such_seat", services.game_kick, game=g, host=users[0], seat_number=5)
    services.game_kick(game=g, host=users[0], seat_number=1)
    assert list(g.seats.values_list("user", flat=True).order_by("number")) == [
        users[0].pk,
        users[2].pk,
    ]
    assert codes(g)[-1] == "seat_kicked"


def test_start(users):
    g = services.game_create(host=users[0])
    refused("not_enough_players", services.game_start, game=g, user=users[0])
    services.game_join(game=g, user=users[1])
    refused("not_host", services.game_start, game=g, user=users[1])
    services.game_start(game=g, user=users[0])
    g.refresh_from_db()
    assert g.status == "playing" and g.state is not None and g.seed
    assert codes(g)[-2:] == ["game_started", "round_dealt"]
    rnd = Round.objects.get(game=g)
    assert rnd.number == 1 and len(rnd.deck) == 52
    assert g.deadlines and g.next_deadline_at is not None
    refused("game_started", services.game_start, game=g, user=users[0])
    refused("game_started", services.game_join, game=g, user=users[2])
    refused("game_started", services.game_leave, game=g, user=users[1])
    refused("game_started", services.game_kick, game=g, host=users[0], seat_number=1)


def test_abandon(users, staff):
    g = services.game_create(host=users[0])
    services.game_join(game=g, user=users[1])
    services.game_start(game=g, user=users[0])
    refused("not_host", services.game_abandon, game=g, user=users[1])
    services.game_abandon(game=g, user=staff)
    g.refresh_from_db()
    assert g.status == "abandoned" and g.deadlines == [] and g.next_deadline_at is None
    refused("game_over", services.game_abandon, game=g, user=users[0])
    refused("game_over", services.game_join, game=g, user=users[2])


def test_end_now_scores_nothing_more(users, staff, start_game):
    g = start_game(users[:3])
    Seat.objects.filter(game=g, number=1).update(score=7)
    Seat.objects.filter(game=g, number=2).update(score=3)
    refused("not_staff", services.game_end_now, game=g, user=users[0])
    services.game_end_now(game=g, user=staff)
    g.refresh_from_db()
    assert g.status == "finished" and g.winners == [0]
    assert codes(g)[-1] == "game_ended"
    refused("not_playing", services.game_end_now, game=g, user=staff)


def test_lobby_changes_broadcast_on_commit_only(
    users, live_calls, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        g = services.game_create(host=users[0])
        services.game_join(game=g, user=users[1])
    assert live_calls.changed == []  # nothing before the commit
    for cb in callbacks:
        cb()
    assert live_calls.changed == [(g.pk, 1), (g.pk, 2)]


def test_refusal_registers_no_callback(users, live_calls, django_capture_on_commit_callbacks):
    g = services.game_create(host=users[0])
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(ServiceError),
    ):
        services.game_start(game=g, user=users[0])
    assert callbacks == [] and live_calls.changed == []


def test_start_schedules_deadlines_on_commit(users, live_calls, django_capture_on_commit_callbacks):
    g = services.game_create(host=users[0])
    services.game_join(game=g, user=users[1])
    with django_capture_on_commit_callbacks(execute=True):
        services.game_start(game=g, user=users[0])
    g.refresh_from_db()
    assert live_calls.changed == [(g.pk, 3)]
    [(gid, deadlines)] = live_calls.scheduled
    assert gid == g.pk and [k for k, _ in deadlines] == [d["key"] for d in g.deadlines]
    assert deadlines[0][1] == g.next_deadline_at


def test_events_are_append_only(users):
    g = services.game_create(host=users[0])
    e = Event.objects.filter(game=g).first()
    e.type = "forged"
    with pytest.raises(ValueError, match="append-only"):
        e.save()


def test_seated_player_joining_a_private_game_without_the_code_is_already_joined(users):
    g = services.game_create(host=users[0], private=True)
    services.game_join(game=g, user=users[1], invite_code=g.invite_code)
    for u in users[:2]:
        err = refused("already_joined", services.game_join, game=g, user=u)
        assert err.status == 409
    refused("not_found", services.game_join, game=g, user=users[2])
