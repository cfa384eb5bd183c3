"""django-axes: 5 failed log-ins for one username from one address lock that pair out."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.test import APIClient

from tests.factories import DEFAULT_PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def _fail(client, username: str, times: int):
    response = None
    for _ in range(times):
        response = client.post(
            reverse("accounts:login"), {"username": username, "password": "wrong password"}
        )
    return response


def test_the_fifth_failure_locks_out_with_a_clear_message(client):
    user = UserFactory()
    assert settings.AXES_FAILURE_LIMIT == 5
    fourth = _fail(client, user.username, 4)
    assert fourth.status_code == 200
    assert "Too many failed log-in attempts" not in fourth.content.decode()

    fifth = _fail(client, user.username, 1)
    assert fifth.status_code == 429
    page = fifth.content.decode()
    assert "Too many failed log-in attempts" in page
    assert "15 minutes" in page
    assert reverse("accounts:password_reset") in page
    assert 'name="password"' in page  # still the log-in page, not a bare error

    # Locked out: even the right password is refused now.
    right = client.post(
        reverse("accounts:login"), {"username": user.username, "password": DEFAULT_PASSWORD}
    )
    assert right.status_code == 429
    assert not client.get(reverse("home")).wsgi_request.user.is_authenticated


def test_the_lockout_message_is_translated(client):
    user = UserFactory()
    client.cookies["django_language"] = "ja"
    page = _fail(client, user.username, 5).content.decode()
    assert "ログイン試行の失敗が多すぎます" in page
    assert "15 分間" in page


def test_the_lockout_is_per_username_and_address(client):
    victim, other = UserFactory(), UserFactory()
    _fail(client, victim.username, 5)
    # Another account from the same address still logs in.
    response = client.post(
        reverse("accounts:login"), {"username": other.username, "password": DEFAULT_PASSWORD}
    )
    assert response.status_code == 302
    # The same account from another address too.
    response = client.post(
        reverse("accounts:login"),
        {"username": victim.username, "password": DEFAULT_PASSWORD},
        REMOTE_ADDR="10.1.2.3",
    )
    assert response.status_code == 302


def test_api_tokens_keep_working_during_a_lockout(client, user, token_and_key):
    assert _fail(client, user.username, 5).status_code == 429
    api = APIClient()  # same address (127.0.0.1) as the failed log-ins
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_and_key[1]}")
    response = api.get(reverse("me:profile"))
    assert response.status_code == 200
    assert response.json()["username"] == user.username


def test_bad_api_tokens_do_not_count_as_log_in_failures(client, user):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Token crisp_aaaaaaaa_" + "A" * 43)
    for _ in range(10):
        assert api.get(reverse("me:profile")).status_code == 401
    response = client.post(
        reverse("accounts:login"), {"username": user.username, "password": DEFAULT_PASSWORD}
    )
    assert response.status_code == 302
