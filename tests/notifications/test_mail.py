"""The "your move" mail digest (issue 26): one mail per person listing the games where it is
their move, never a game twice within the hour, nothing once the move is made, nothing for live
games, guests or accounts without an address; the one-click unsubscribe; the settings page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from games import signals
from games.models import Game
from notifications import services
from notifications.models import MailSent, NotificationSettings

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(make_user):
    return [make_user(f"p{i}", email=f"p{i}@example.com") for i in range(4)]


@pytest.fixture
def tc_game(people, start_game, notify_live):
    """A Triple Crown game whose first move is seat 0's (people[0])."""
    return start_game(people, kind="triple_crown")


def test_the_digest_lists_the_awaited_game_once_an_hour(tc_game, people, mailoutbox):
    assert services.send_digest(people[0].pk) == [tc_game.pk]
    assert len(mailoutbox) == 1
    message = mailoutbox[0]
    assert message.to == ["p0@example.com"]
    assert "Your move" in message.subject
    assert f"/games/{tc_game.pk}/" in message.body
    html = message.alternatives[0][0]
    assert f"/games/{tc_game.pk}/" in html
    assert '<html lang="en">' in html
    # RFC 8058 one-click unsubscribe, pointing at the signed link.
    token = services.unsubscribe_token(people[0].pk)
    assert message.extra_headers["List-Unsubscribe"].endswith(
        f"/notifications/unsubscribe/{token}/>"
    )
    assert message.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    # Not again within the hour, however many digests run.
    assert services.send_digest(people[0].pk) == []
    assert services.send_digest(people[0].pk) == []
    assert len(mailoutbox) == 1
    # Others are not awaited: no mail.
    assert services.send_digest(people[1].pk) == []
    # An hour later, still their move: one more mail.
    MailSent.objects.update(sent_at=timezone.now() - timedelta(seconds=3601))
    assert services.send_digest(people[0].pk) == [tc_game.pk]
    assert len(mailoutbox) == 2
    assert MailSent.objects.count() == 1  # the log keeps the last hour only


def test_one_mail_lists_every_awaited_game(people, start_game, notify_live, mailoutbox):
    one = start_game(people, kind="triple_crown")
    two = start_game([people[0], people[2]], kind="crisp")
    assert sorted(services.send_digest(people[0].pk)) == sorted([one.pk, two.pk])
    assert len(mailoutbox) == 1
    assert "2 games" in mailoutbox[0].subject
    body = mailoutbox[0].body
    for game in (one, two):
        assert f"/games/{game.pk}/" in body
    # The game with a deadline (Crisp's opening start) first, with its time left.
    assert body.index(f"/games/{two.pk}/") < body.index(f"/games/{one.pk}/")
    assert body.count("Time left:") == 1


def test_a_game_mailed_within_the_hour_is_left_out_of_the_next_digest(
    people, start_game, notify_live, mailoutbox
):
    one = start_game(people, kind="triple_crown")
    assert services.send_digest(people[0].pk) == [one.pk]
    two = start_game([people[0], people[2]], kind="crisp")
    assert services.send_digest(people[0].pk) == [two.pk]
    assert f"/games/{one.pk}/" not in mailoutbox[1].body


def test_no_mail_once_the_move_is_made(tc_game, people, move, mailoutbox):
    move(tc_game, people[0])
    assert services.send_digest(people[0].pk) == []
    assert mailoutbox == []
    # ... and the next player's move is mailed to them.
    assert services.send_digest(people[1].pk) == [tc_game.pk]


def test_no_mail_for_a_live_game_by_default(people, start_game, mailoutbox):
    game = start_game(people, kind="triple_crown")
    assert game.settings.get("pace", "live") == "live"
    assert services.send_digest(people[0].pk) == []
    assert mailoutbox == []


def test_only_turn_based_games_notify_by_default():
    assert services.notifies(Game(settings={"pace": "turn_based", "turn_seconds": 60}))
    assert not services.notifies(Game(settings={"pace": "live"}))
    assert not services.notifies(Game(settings={}))


def test_no_mail_without_an_address_or_with_mail_off(tc_game, people, mailoutbox):
    people[0].email = ""
    people[0].save()
    assert services.send_digest(people[0].pk) == []
    people[0].email = "p0@example.com"
    people[0].save()
    services.set_mail(people[0].pk, False)
    assert services.send_digest(people[0].pk) == []
    assert mailoutbox == []


def test_no_mail_to_a_guest(tc_game, people, mailoutbox):
    type(people[0]).objects.filter(pk=people[0].pk).update(is_guest=True)
    assert services.send_digest(people[0].pk) == []
    assert services.send_digest(people[1].pk) == []  # not awaited
    assert mailoutbox == []


def test_a_failed_send_leaves_the_game_for_the_next_digest(tc_game, people, mailoutbox, settings):
    settings.EMAIL_BACKEND = "tests.notifications.failing_mail.Backend"
    with pytest.raises(OSError):
        services.send_digest(people[0].pk)
    assert not MailSent.objects.exists()
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert services.send_digest(people[0].pk) == [tc_game.pk]


def test_the_mail_speaks_the_recipient_s_language(tc_game, people, mailoutbox):
    people[0].language = "ja"
    people[0].save()
    services.send_digest(people[0].pk)
    assert "あなたの番" in mailoutbox[0].subject
    assert "あなたの番" in mailoutbox[0].body
    assert '<html lang="ja">' in mailoutbox[0].alternatives[0][0]


def test_your_move_queues_a_push_now_and_a_digest_later(tc_game, people, mailoutbox, queued):
    signals.your_move.send(sender=Game, game=tc_game, user_ids=[people[0].pk], deadline=None)
    assert [(task.name, args, countdown) for task, args, countdown in queued] == [
        ("notifications.push_your_move", (people[0].pk, tc_game.pk), None),
        ("notifications.mail_digest", (people[0].pk,), 300),
    ]
    for task, args, _ in queued:
        task(*args)  # what the worker runs
    assert len(mailoutbox) == 1
    assert mailoutbox[0].to == ["p0@example.com"]


def test_your_move_of_a_live_game_queues_nothing(people, start_game, queued):
    game = start_game(people, kind="triple_crown")
    signals.your_move.send(sender=Game, game=game, user_ids=[people[0].pk], deadline=None)
    assert queued == []


def test_a_broker_down_never_reaches_the_player(tc_game, people, monkeypatch):
    from notifications import tasks

    def down(*args, **kwargs):
        raise ConnectionError("redis is down")

    monkeypatch.setattr(tasks.push_your_move, "delay", down)
    signals.your_move.send(sender=Game, game=tc_game, user_ids=[people[0].pk], deadline=None)


# --- Unsubscribe --------------------------------------------------------------------------------
def test_unsubscribe_get_asks_and_post_unsubscribes_without_login(people):
    url = reverse("notifications:unsubscribe", args=[services.unsubscribe_token(people[0].pk)])
    client = Client(enforce_csrf_checks=True)
    page = client.get(url)
    assert page.status_code == 200
    assert b"<form" in page.content
    assert NotificationSettings.for_user(people[0].pk).mail  # a GET changes nothing
    # RFC 8058: the mail client's one-click POST, no cookie, no CSRF token.
    done = client.post(
        url,
        data="List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    assert done.status_code == 200
    assert not NotificationSettings.for_user(people[0].pk).mail
    assert NotificationSettings.for_user(people[1].pk).mail


@pytest.mark.parametrize("token", ["nonsense", "eyJ1Ijo1fQ:forged", "x" * 300])
def test_a_bad_unsubscribe_token_is_refused(people, token):
    page = Client().post(reverse("notifications:unsubscribe", args=[token]))
    assert page.status_code == 400
    assert NotificationSettings.objects.count() == 0


def test_a_token_signed_for_something_else_is_refused(people):
    from django.core import signing

    token = signing.Signer(salt="other").sign_object({"u": people[0].pk})
    page = Client().post(reverse("notifications:unsubscribe", args=[token]))
    assert page.status_code == 400
    assert NotificationSettings.for_user(people[0].pk).mail


# --- Settings page ------------------------------------------------------------------------------
def test_the_settings_page_switches_mail(people, client):
    url = reverse("notifications:settings")
    assert client.get(url).status_code == 302  # log in first
    client.force_login(people[0])
    page = client.get(url)
    assert page.status_code == 200
    assert b'name="mail"' in page.content
    assert b'name="push"' not in page.content  # no VAPID keys: no push switch
    client.post(url, {"push": "on"})
    row = NotificationSettings.for_user(people[0].pk)
    assert (row.mail, row.push) == (False, True)
    client.post(url, {"mail": "on", "push": "on"})
    assert NotificationSettings.for_user(people[0].pk).mail


def test_the_profile_page_links_to_the_settings(people, client):
    client.force_login(people[0])
    page = client.get(reverse("accounts:profile"))
    assert reverse("notifications:settings").encode() in page.content
