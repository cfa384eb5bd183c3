"""The API tokens web page: create (key shown once), list, revoke."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from accounts import keys, services
from accounts.models import ApiToken
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def member(client):
    user = UserFactory()
    client.force_login(user)
    return user


def test_creating_a_token_shows_its_key_once(client, member):
    response = client.post(reverse("accounts:tokens"), {"name": "my bot"})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    page = response.content.decode()
    key = re.search(r"crisp_[a-z0-9]{8}_[A-Za-z0-9_-]{43}", page).group(0)
    token = ApiToken.objects.get(user=member)
    assert token.name == "my bot"
    assert token.key_hash == keys.key_hash(key)

    again = client.get(reverse("accounts:tokens")).content.decode()
    assert key not in again
    assert "my bot" in again
    assert f"crisp_{token.prefix}_" in again


def test_a_token_without_a_name_is_refused(client, member):
    response = client.post(reverse("accounts:tokens"), {"name": ""})
    assert response.context["form"].errors["name"]
    assert not ApiToken.objects.exists()


def test_the_page_lists_only_my_tokens(client, member):
    services.token_create(user=member, name="mine")
    services.token_create(user=UserFactory(), name="someone else's")
    page = client.get(reverse("accounts:tokens")).content.decode()
    assert "mine" in page
    assert "someone else" not in page


def test_revoking_a_token(client, member):
    token, _ = services.token_create(user=member, name="old bot")
    url = reverse("accounts:token_revoke", args=[token.pk])
    assert client.get(url).status_code == 405
    response = client.post(url, follow=True)
    assert "has been revoked" in response.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_nobody_can_revoke_somebody_elses_token(client, member):
    token, _ = services.token_create(user=UserFactory(), name="theirs")
    response = client.post(reverse("accounts:token_revoke", args=[token.pk]))
    assert response.status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_token_pages_need_csrf(member):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(member)
    assert strict.post(reverse("accounts:tokens"), {"name": "x"}).status_code == 403
    assert not ApiToken.objects.exists()
