"""The games admin: list/search/filters, the unredacted log for staff, service-backed actions,
and "view as seat N" showing exactly the seat's redacted payload."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from games import selectors, services
from games.models import Game


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    return client


def test_changelist_search_and_filters(admin_client, users, start_game):
    g = start_game(users[:2])
    url = reverse("admin:games_game_changelist")
    assert admin_client.get(url).status_code == 200
    r = admin_client.get(url, {"q": users[1].username})
    assert r.status_code == 200 and str(g.pk) in r.content.decode()
    assert admin_client.get(url, {"status__exact": "playing"}).status_code == 200


def test_change_page_shows_unredacted_log(admin_client, users, start_game):
    g = start_game(users[:2])
    page = admin_client.get(reverse("admin:games_game_change", args=[g.pk])).content.decode()
    assert "round_dealt" in page and "deck" in page  # the full event payload, for admins
    assert "view-as/0/" in page and "view-as/spectator/" in page


def test_view_as_seat_is_exactly_the_seat_payload(admin_client, users, start_game, fake_clock):
    g = start_game(users[:2])
    services.game_act(game=g, user=users[0], action={"type": "look"}, expected_version=3)
    g.refresh_from_db()
    for seat in (0, 1, "spectator"):
        r = admin_client.get(reverse("admin:games_game_view_as", args=[g.pk, seat]))
        assert r.status_code == 200
        number = None if seat == "spectator" else seat
        expected = selectors.game_payload_for_seat(game=g, seat=number, now=fake_clock.ms)
        assert json.loads(r.context["payload_json"]) == expected
    assert admin_client.get(reverse("admin:games_game_view_as", args=[g.pk, 7])).status_code == 404


def test_admin_pages_need_staff(client, users, start_game):
    g = start_game(users[:2])
    client.force_login(users[0])
    r = client.get(reverse("admin:games_game_view_as", args=[g.pk, 1]))
    assert r.status_code == 302  # to the admin log-in, never the payload


def test_actions_go_through_the_services(
    admin_client, users, start_game, live_calls, django_capture_on_commit_callbacks
):
    a = start_game(users[:2])
    b = start_game(users[2:4])
    lobby = services.game_create(host=users[4])
    url = reverse("admin:games_game_changelist")
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url, {"action": "end_games_now", "_selected_action": [a.pk, lobby.pk]})
        admin_client.post(url, {"action": "abandon_games", "_selected_action": [b.pk]})
    assert Game.objects.get(pk=a.pk).status == "finished"
    assert Game.objects.get(pk=lobby.pk).status == "lobby"  # refused: not playing
    assert Game.objects.get(pk=b.pk).status == "abandoned"
    assert {gid for gid, _ in live_calls.changed} == {a.pk, b.pk}
