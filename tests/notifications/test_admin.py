"""The notifications' admin pages open for staff (the subscription keys read-only)."""

from __future__ import annotations

import pytest

from notifications import services
from notifications.models import MailSent, NotificationSettings, PushSubscription

pytestmark = pytest.mark.django_db


def test_the_admin_pages_open(client, make_user, tc_game_for_admin):
    staff = make_user("boss", is_staff=True, is_superuser=True)
    person = tc_game_for_admin.host
    NotificationSettings.objects.create(user=person, mail=False)
    sub = services.subscribe(person, "https://push.example/1", "A" * 87, "A" * 22)
    MailSent.objects.create(user=person, game=tc_game_for_admin)
    client.force_login(staff)
    for model in ("notificationsettings", "pushsubscription", "mailsent"):
        assert client.get(f"/admin/notifications/{model}/").status_code == 200
    page = client.get(f"/admin/notifications/pushsubscription/{sub.pk}/change/")
    assert page.status_code == 200
    assert b'name="p256dh"' not in page.content  # shown, not editable
    assert PushSubscription.objects.count() == 1


@pytest.fixture
def tc_game_for_admin(users, start_game):
    return start_game(users[:4], kind="triple_crown")
