"""From a move to the mail and the push (issue 26): the service layer's ``your_move`` (sent on
commit, ``games/services/commit.py``) reaches the notifications, which queue a push now and a
digest later; run as the worker would, they mail and push the player whose move it now is."""

from __future__ import annotations

import pytest

from notifications import services
from tests.notifications.push_endpoint import Browser

pytestmark = pytest.mark.django_db


def test_a_move_mails_and_pushes_the_next_player(
    make_user,
    start_game,
    move,
    queued,
    push_service,
    mailoutbox,
    django_capture_on_commit_callbacks,
):
    people = [make_user(f"p{i}", email=f"p{i}@example.com") for i in range(4)]
    with django_capture_on_commit_callbacks(execute=True):
        game = start_game(people, kind="triple_crown", pace="turn_based", turn_seconds=86_400)
    assert {args for _, args, _ in queued} == {(people[0].pk, game.pk), (people[0].pk,)}
    queued.clear()
    browser = Browser()
    services.subscribe(people[1], push_service.url("/push/p1"), browser.p256dh, browser.auth)
    with django_capture_on_commit_callbacks(execute=True):
        move(game, people[0])
    assert queued, "no notification queued for the next player"
    assert {args[0] for _, args, _ in queued} == {people[1].pk}
    for task, args, _ in queued:
        task(*args)
    assert [m.to for m in mailoutbox] == [["p1@example.com"]]
    [request] = push_service.received
    assert browser.decrypt(request.body)["url"] == f"/games/{game.pk}/"


def test_a_live_game_s_move_queues_nothing(
    make_user, start_game, move, queued, django_capture_on_commit_callbacks
):
    people = [make_user(f"p{i}", email=f"p{i}@example.com") for i in range(4)]
    with django_capture_on_commit_callbacks(execute=True):
        game = start_game(people, kind="triple_crown")
        move(game, people[0])
    assert queued == []
