"""Sign-up, log-in, log-out, password change and reset, through the test client."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.urls import reverse

from accounts.models import User
from tests.factories import DEFAULT_PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-brand-new-secret-42"


def _logged_in_user(client):
    return client.get(reverse("home")).wsgi_request.user


def test_signup_creates_the_account_and_logs_in(client):
    page = client.get(reverse("accounts:signup"))
    assert page.status_code == 200
    response = client.post(
        reverse("accounts:signup"),
        {"username": "newbie", "email": "", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("games:lobby")  # a new player lands where games are
    user = User.objects.get(username="newbie")
    assert user.check_password(NEW_PASSWORD)
    assert user.email == ""
    assert _logged_in_user(client) == user


def test_signup_takes_the_current_site_language_as_preference(client):
    client.cookies["django_language"] = "ru"
    client.post(
        reverse("accounts:signup"),
        {"username": "ivan", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert User.objects.get(username="ivan").language == "ru"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"username": "x", "password1": NEW_PASSWORD, "password2": "different-42"}, "password2"),
        ({"username": "x", "password1": "123", "password2": "123"}, "password2"),
        ({"username": "PLAYER", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}, "username"),
        (
            {
                "username": "x",
                "email": "not-an-address",
                "password1": NEW_PASSWORD,
                "password2": NEW_PASSWORD,
            },
            "email",
        ),
    ],
)
def test_signup_shows_errors_and_creates_nothing(client, data, field):
    UserFactory(username="player")
    response = client.post(reverse("accounts:signup"), data)
    assert response.status_code == 200
    assert response.context["form"].errors.get(field)
    assert User.objects.count() == 1
    assert not _logged_in_user(client).is_authenticated


def test_login_and_logout(client):
    user = UserFactory()
    response = client.post(
        reverse("accounts:login"), {"username": user.username, "password": DEFAULT_PASSWORD}
    )
    assert response.status_code == 302
    assert _logged_in_user(client) == user
    home = client.get(reverse("home"))
    assert reverse("accounts:logout") in home.content.decode()
    # Log-out is POST only: a link (or an <img> on another site) cannot log anybody out.
    assert client.get(reverse("accounts:logout")).status_code == 405
    assert _logged_in_user(client) == user
    assert client.post(reverse("accounts:logout")).status_code == 302
    assert not _logged_in_user(client).is_authenticated


def test_login_with_a_wrong_password_shows_an_error(client):
    user = UserFactory()
    response = client.post(
        reverse("accounts:login"), {"username": user.username, "password": "wrong"}
    )
    assert response.status_code == 200
    assert response.context["form"].non_field_errors()
    assert not _logged_in_user(client).is_authenticated


def test_nav_shows_login_links_to_visitors_and_profile_links_to_members(client):
    user = UserFactory(display_name="Queen of Hearts")
    page = client.get(reverse("home")).content.decode()
    assert reverse("accounts:login") in page and reverse("accounts:signup") in page
    assert reverse("accounts:tokens") not in page
    client.force_login(user)
    page = client.get(reverse("home")).content.decode()
    assert "Queen of Hearts" in page
    assert reverse("accounts:tokens") in page and reverse("accounts:profile") in page
    assert reverse("accounts:signup") not in page


def test_profile_and_tokens_need_a_log_in(client):
    for name in ("accounts:profile", "accounts:tokens", "accounts:password_change"):
        response = client.get(reverse(name))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("accounts:login"))


def test_profile_page_saves_display_name_and_email(client):
    user = UserFactory()
    client.force_login(user)
    response = client.post(
        reverse("accounts:profile"),
        {"display_name": "Ace", "language": "en", "email": "ace@example.com"},
        follow=True,
    )
    assert "Your profile has been saved." in response.content.decode()
    user.refresh_from_db()
    assert (user.display_name, user.email) == ("Ace", "ace@example.com")


def test_password_change(client):
    user = UserFactory()
    client.force_login(user)
    response = client.post(
        reverse("accounts:password_change"),
        {
            "old_password": DEFAULT_PASSWORD,
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
        },
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:password_change_done")
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)
    # The session that changed the password stays logged in.
    assert _logged_in_user(client) == user


def test_password_change_needs_the_old_password(client):
    user = UserFactory()
    client.force_login(user)
    response = client.post(
        reverse("accounts:password_change"),
        {"old_password": "wrong", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 200
    user.refresh_from_db()
    assert user.check_password(DEFAULT_PASSWORD)


def test_password_reset_by_email(client):
    user = UserFactory(email="reset@example.com")
    response = client.post(reverse("accounts:password_reset"), {"email": "reset@example.com"})
    assert response["Location"] == reverse("accounts:password_reset_done")
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["reset@example.com"]
    assert "\n" not in message.subject and "Crisp online" in message.subject
    link = re.search(r"https?://[^/\s]+(/accounts/password/reset/\S+/)", message.body).group(1)

    form_page = client.get(link, follow=True)
    assert form_page.context["validlink"]
    response = client.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response["Location"] == reverse("accounts:password_reset_complete")
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)
    # The link works once.
    assert not client.get(link, follow=True).context["validlink"]


def test_password_reset_for_an_unknown_address_sends_nothing_and_tells_nothing(client):
    response = client.post(reverse("accounts:password_reset"), {"email": "nobody@example.com"})
    assert response["Location"] == reverse("accounts:password_reset_done")
    assert mail.outbox == []


def test_signup_goes_back_where_the_visitor_was_going(client):
    """An invite link opened signed out: log-in offers sign-up, and sign-up comes back to the
    game (only ever to a page of this site)."""
    target = "/games/7/?code=ABCDEFGH"
    login_page = client.get(reverse("accounts:login"), {"next": target}).content.decode()
    assert 'href="/accounts/signup/?next=/games/7/%3Fcode%3DABCDEFGH"' in login_page
    form = client.get(reverse("accounts:signup"), {"next": target}).content.decode()
    assert f'name="next" value="{target}"' in form.replace("&#x3D;", "=").replace("&amp;", "&")
    data = {"username": "invitee", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    response = client.post(reverse("accounts:signup"), {**data, "next": target})
    assert response["Location"] == target
    client.logout()
    data["username"] = "elsewhere"
    response = client.post(reverse("accounts:signup"), {**data, "next": "https://evil.example/"})
    assert response["Location"] == reverse("games:lobby")
