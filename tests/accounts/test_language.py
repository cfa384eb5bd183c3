"""A person's preferred language switches the site's language for them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import DEFAULT_PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

# The nav's "Log out" button, in each language (from locale/*/django.po).
LOG_OUT = {"en": "Log out", "ja": "ログアウト", "ru": "Выйти"}


def _html_lang(response) -> str:
    return response.content.decode().split('<html lang="', 1)[1].split('"', 1)[0]


@pytest.mark.parametrize("language", ["ja", "ru"])
def test_logging_in_switches_the_site_to_the_preferred_language(client, language):
    user = UserFactory(language=language)
    response = client.post(
        reverse("accounts:login"),
        {"username": user.username, "password": DEFAULT_PASSWORD},
        follow=True,
    )
    assert _html_lang(response) == language
    assert LOG_OUT[language] in response.content.decode()
    assert LOG_OUT["en"] not in response.content.decode()


def test_logging_in_overrides_a_language_chosen_before(client):
    user = UserFactory(language="ja")
    client.cookies["django_language"] = "ru"
    client.post(
        reverse("accounts:login"), {"username": user.username, "password": DEFAULT_PASSWORD}
    )
    assert _html_lang(client.get(reverse("home"))) == "ja"


def test_english_speakers_get_english(client):
    user = UserFactory(language="en")
    client.cookies["django_language"] = "ja"
    response = client.post(
        reverse("accounts:login"),
        {"username": user.username, "password": DEFAULT_PASSWORD},
        follow=True,
    )
    assert _html_lang(response) == "en"
    assert LOG_OUT["en"] in response.content.decode()


def test_saving_the_profile_switches_the_language_at_once(client):
    user = UserFactory(language="en")
    client.force_login(user)
    response = client.post(
        reverse("accounts:profile"),
        {"display_name": "", "language": "ru", "email": ""},
        follow=True,
    )
    assert _html_lang(response) == "ru"
    assert "Ваш профиль сохранён." in response.content.decode()
    user.refresh_from_db()
    assert user.language == "ru"


def test_header_language_menu_also_saves_the_preference(client):
    user = UserFactory(language="en")
    client.force_login(user)
    response = client.post(
        reverse("accounts:set_language"), {"language": "ja", "next": "/"}, follow=True
    )
    assert _html_lang(response) == "ja"
    user.refresh_from_db()
    assert user.language == "ja"


def test_header_language_menu_works_for_visitors(client):
    response = client.post(
        reverse("accounts:set_language"), {"language": "ru", "next": "/"}, follow=True
    )
    assert _html_lang(response) == "ru"
    assert "Войти" in response.content.decode()
