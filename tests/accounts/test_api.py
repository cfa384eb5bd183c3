"""/api/v1/me/: profile and tokens, token authentication, CSRF for session callers."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from accounts import services
from accounts.models import ApiToken
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PROFILE = reverse("me:profile")
TOKENS = reverse("me:tokens")


def _revoke_url(token) -> str:
    return reverse("me:token_revoke", args=[token.pk])


@pytest.fixture
def bot(user, token_and_key) -> APIClient:
    """A client authenticated by the user's API token."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_and_key[1]}")
    return client


# --- Token authentication ------------------------------------------------------------------------


def test_token_authentication_gives_the_tokens_user(bot, user):
    response = bot.get(PROFILE)
    assert response.status_code == 200
    assert response.json()["username"] == user.username


def test_bearer_scheme_works_too(user, token_and_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_and_key[1]}")
    assert client.get(PROFILE).json()["username"] == user.username


def test_token_use_is_recorded_at_most_once_a_minute(bot, token_and_key):
    token = token_and_key[0]
    bot.get(PROFILE)
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None
    bot.get(PROFILE)
    token.refresh_from_db()
    assert token.last_used_at == first
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(minutes=2))
    bot.get(PROFILE)
    token.refresh_from_db()
    assert token.last_used_at > first - timedelta(seconds=5)
    assert token.last_used_at <= timezone.now()


def test_a_revoked_token_gets_a_clear_401(bot, token_and_key):
    services.token_revoke(token=token_and_key[0])
    response = bot.get(PROFILE)
    assert response.status_code == 401
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["detail"] == "This token has been revoked."
    assert response.json().get("code", "token_revoked") == "token_revoked"
    assert response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize(
    ("header", "detail_start"),
    [
        ("Token crisp_aaaaaaaa_" + "A" * 43, "Invalid token."),  # well-formed, unknown
        ("Token not-a-token", "Invalid token."),
        ("Token", "Invalid Authorization header"),
        ("Token two parts", "Invalid Authorization header"),
        ("Bearer", "Invalid Authorization header"),
    ],
)
def test_malformed_or_unknown_tokens_get_401(header, detail_start):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get(PROFILE)
    assert response.status_code == 401
    assert response.json()["detail"].startswith(detail_start)


def test_non_ascii_token_gets_401():
    client = Client(HTTP_AUTHORIZATION="Token crisp_é".encode().decode("latin-1"))
    response = client.get(PROFILE)
    assert response.status_code == 401
    assert "detail" in response.json()


def test_a_token_of_a_deactivated_user_is_refused(bot, user):
    user.is_active = False
    user.save()
    assert bot.get(PROFILE).status_code == 401


def test_no_credentials_get_401_json():
    response = APIClient().get(PROFILE)
    assert response.status_code == 401
    assert response.json()["detail"]


def test_token_requests_need_no_csrf(user, token_and_key):
    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Token {token_and_key[1]}")
    response = client.patch(PROFILE, {"display_name": "Bot"}, content_type="application/json")
    assert response.status_code == 200
    user.refresh_from_db()
    assert user.display_name == "Bot"


def test_session_api_calls_need_csrf(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.get(PROFILE).status_code == 200  # reads are safe
    refused = client.patch(PROFILE, {"display_name": "X"}, content_type="application/json")
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["detail"]
    assert client.post(TOKENS, {"name": "x"}, content_type="application/json").status_code == 403
    assert not ApiToken.objects.exists()

    # With the token from the cookie, as the site's own JavaScript would send it.
    client.get(reverse("accounts:profile"))
    csrf = client.cookies["csrftoken"].value
    ok = client.patch(
        PROFILE, {"display_name": "X"}, content_type="application/json", HTTP_X_CSRFTOKEN=csrf
    )
    assert ok.status_code == 200
    user.refresh_from_db()
    assert user.display_name == "X"


# --- Profile -------------------------------------------------------------------------------------


def test_profile_get(bot, user):
    data = bot.get(PROFILE).json()
    assert set(data) == {
        "id",
        "username",
        "display_name",
        "public_name",
        "email",
        "language",
        "date_joined",
        "is_guest",
    }
    assert data["id"] == user.pk and data["is_guest"] is False
    assert "password" not in data


def test_profile_patch(bot, user):
    response = bot.patch(PROFILE, {"display_name": "Jack", "language": "ja"}, format="json")
    assert response.status_code == 200
    assert response.json()["public_name"] == "Jack"
    user.refresh_from_db()
    assert (user.display_name, user.language) == ("Jack", "ja")


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"language": "de"}, "language"),
        ({"email": "nope"}, "email"),
        ({"display_name": "x" * 41}, "display_name"),
    ],
)
def test_profile_patch_rejects_bad_input_with_400_json(bot, user, data, field):
    response = bot.patch(PROFILE, data, format="json")
    assert response.status_code == 400
    body = response.json()
    assert field in body.get("errors", body)
    user.refresh_from_db()
    assert user.language == "en"


def test_profile_patch_cannot_change_the_username(bot, user):
    bot.patch(PROFILE, {"username": "hijack"}, format="json")
    user.refresh_from_db()
    assert user.username != "hijack"


# --- Tokens --------------------------------------------------------------------------------------


def test_token_create_returns_the_key_once(bot, user):
    response = bot.post(TOKENS, {"name": "second bot"}, format="json")
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert body["name"] == "second bot" and body["active"] is True
    assert body["key"].startswith(f"crisp_{body['prefix']}_")

    fresh = APIClient()
    fresh.credentials(HTTP_AUTHORIZATION=f"Token {body['key']}")
    assert fresh.get(PROFILE).json()["username"] == user.username

    listed = bot.get(TOKENS).json()
    assert {t["name"] for t in listed} == {"my bot", "second bot"}
    assert all("key" not in t and "key_hash" not in t for t in listed)


def test_token_create_needs_a_name(bot):
    response = bot.post(TOKENS, {}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert "name" in body.get("errors", body)


def test_token_create_over_the_cap_is_a_400_with_a_detail(bot, user, settings, monkeypatch):
    monkeypatch.setattr(services, "MAX_ACTIVE_TOKENS", 1)
    response = bot.post(TOKENS, {"name": "too many"}, format="json")
    assert response.status_code == 400
    assert "Revoke one" in str(response.json())


def test_token_list_shows_only_my_tokens(bot, user):
    services.token_create(user=UserFactory(), name="not mine")
    assert [t["name"] for t in bot.get(TOKENS).json()] == ["my bot"]


def test_token_revoke(bot, user):
    other, _ = services.token_create(user=user, name="old")
    response = bot.post(_revoke_url(other))
    assert response.status_code == 200
    assert response.json()["active"] is False
    assert response.json()["revoked_at"]
    other.refresh_from_db()
    assert other.revoked_at is not None


def test_revoking_the_token_in_use_locks_the_client_out(bot, token_and_key):
    assert bot.post(_revoke_url(token_and_key[0])).status_code == 200
    assert bot.get(PROFILE).status_code == 401


def test_revoking_somebody_elses_token_is_a_404(bot):
    theirs, _ = services.token_create(user=UserFactory(), name="theirs")
    response = bot.post(_revoke_url(theirs))
    assert response.status_code == 404
    assert response.json()["detail"]
    theirs.refresh_from_db()
    assert theirs.revoked_at is None
