"""Guest play (issue 24, item 1): one click to a table without an account, marked as a guest
everywhere, converted in place by signing up, never rated, throttled, cleaned up when idle."""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
from django.contrib.auth import SESSION_KEY
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts import services
from accounts.models import ApiToken, User
from games import selectors as game_selectors
from games import services as game_services
from games.models import Game, Seat
from history import ratings
from history.models import GameRecord, PlayerStats, Rating
from tests.factories import DEFAULT_PASSWORD, UserFactory
from tests.games import conftest as _games

# The games tests' fixtures: the live layer recorded, not sent; started games at a fake clock.
live_calls = _games.live_calls
fake_clock = _games.fake_clock
start_game = _games.start_game

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-brand-new-secret-42"


def _me(client) -> User:
    return client.get(reverse("home")).wsgi_request.user


@pytest.fixture
def staff(db):
    return UserFactory(is_staff=True)


def _guest_client(next_url: str = "/games/") -> tuple[Client, User]:
    client = Client()
    response = client.post(reverse("accounts:guest"), {"next": next_url})
    assert response.status_code == 302
    return client, _me(client)


# --- Making a guest --------------------------------------------------------------------------


def test_play_as_guest_makes_a_signed_in_guest_and_goes_on(client):
    response = client.post(reverse("accounts:guest"), {"next": "/rules/crisp/"})
    assert response.status_code == 302 and response["Location"] == "/rules/crisp/"
    guest = _me(client)
    assert guest.is_authenticated and guest.is_guest and guest.is_active
    assert guest.username.startswith(services.GUEST_PREFIX)
    assert re.fullmatch(r"Guest \d{4}", guest.display_name)
    assert not guest.has_usable_password()
    # Already signed in: no second account, just on to next.
    client.post(reverse("accounts:guest"), {"next": "/games/"})
    assert User.objects.filter(is_guest=True).count() == 1


def test_play_as_guest_refuses_a_foreign_next_a_get_and_a_missing_csrf_token():
    client = Client()
    response = client.post(reverse("accounts:guest"), {"next": "https://evil.example/"})
    assert response["Location"] == reverse("games:lobby")
    assert Client().get(reverse("accounts:guest")).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    assert strict.post(reverse("accounts:guest")).status_code == 403
    assert User.objects.filter(is_guest=True).count() == 1


@pytest.mark.parametrize(("language", "word"), [("ja", "ゲスト"), ("ru", "Гость")])
def test_a_guest_is_named_in_the_language_of_its_page(client, language, word):
    client.cookies["django_language"] = language
    client.post(reverse("accounts:guest"))
    guest = User.objects.get(is_guest=True)
    assert guest.display_name.startswith(word + " ") and guest.language == language


def test_the_home_page_plays_against_the_computer_in_one_click_as_a_guest(client):
    page = client.get(reverse("home")).content.decode()
    assert 'name="as_guest" value="1"' in page and "no guest play" not in page
    response = client.post(
        reverse("games:vs-computer"), {"kind": "cribbage", "level": "medium", "as_guest": "1"}
    )
    game = Game.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/games/{game.pk}/"
    guest = _me(client)
    assert guest.is_guest and game.status == Game.Status.PLAYING and game.host == guest
    assert client.get(response["Location"]).status_code == 200  # the live table is theirs


def test_play_with_friends_as_a_guest_opens_a_private_lobby(client):
    client.post(reverse("games:create"), {"kind": "crisp", "private": "1", "as_guest": "1"})
    game = Game.objects.get()
    assert game.private and game.status == Game.Status.LOBBY and game.host.is_guest


def test_a_play_action_without_as_guest_still_asks_to_log_in(client):
    response = client.post(reverse("games:vs-computer"), {"kind": "crisp"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert not User.objects.filter(is_guest=True).exists() and not Game.objects.exists()


def test_an_invite_link_offers_play_as_guest_and_the_guest_joins(client):
    host = UserFactory()
    game = game_services.game_create(host=host, kind="crisp", settings={}, private=True)
    link = f"/games/{game.pk}/?code={game.invite_code}"
    login_page = client.get(link, follow=True).content.decode()
    assert 'id="play-as-guest"' in login_page
    assert f'name="next" value="/games/{game.pk}/?code={game.invite_code}"' in login_page
    response = client.post(reverse("accounts:guest"), {"next": link})
    assert response["Location"] == link
    assert client.get(link).status_code == 200
    client.post(f"/games/{game.pk}/join/", {"invite_code": game.invite_code})
    assert game.seats.filter(user__is_guest=True).count() == 1


# --- Marked as a guest everywhere ------------------------------------------------------------


def test_a_guest_is_marked_in_the_header_the_api_the_seats_and_the_profile(client):
    client.post(reverse("games:vs-computer"), {"kind": "crisp", "as_guest": "1"})
    guest, game = _me(client), Game.objects.get()
    header = client.get(reverse("home")).content.decode()
    assert 'id="guest-signup-link"' in header and "Sign up to keep your games" in header
    assert 'class="badge guest-badge"' in header
    assert reverse("accounts:tokens") not in header
    assert client.get("/api/v1/me/").json()["is_guest"] is True
    seats = client.get(f"/api/v1/games/{game.pk}/").json()["seats"]
    assert [s["is_guest"] for s in seats] == [True, False, False, False]
    detail = game_selectors.game_detail(game=game, user=guest)
    assert detail["seats"][0]["is_guest"] is True
    boot = client.get(f"/games/{game.pk}/").context["boot"]
    assert boot["seats"][0]["is_guest"] is True
    profile = client.get(f"/players/{guest.username}/").content.decode()
    assert 'id="guest-profile"' in profile
    assert client.get(f"/api/v1/players/{guest.username}/").json()["is_guest"] is True
    # A registered person is not.
    person = Client()
    person.force_login(UserFactory())
    assert person.get("/api/v1/me/").json()["is_guest"] is False
    assert 'id="guest-signup-link"' not in person.get(reverse("home")).content.decode()


def test_a_guest_cannot_create_api_tokens(client, api_client):
    client.post(reverse("accounts:guest"))
    guest = _me(client)
    page = client.get(reverse("accounts:tokens")).content.decode()
    assert 'id="guest-tokens"' in page and 'name="name"' not in page
    response = client.post("/api/v1/me/tokens/", {"name": "bot"}, content_type="application/json")
    assert response.status_code == 403 and "sign up" in response.json()["detail"]
    client.post(reverse("accounts:tokens"), {"name": "bot"})
    with pytest.raises(Exception, match="sign up first"):
        services.token_create(user=guest, name="bot")
    assert not ApiToken.objects.exists()


# --- Signing up keeps everything ------------------------------------------------------------


def test_signing_up_converts_the_guest_in_place_and_keeps_its_games(client, staff):
    client.post(reverse("games:vs-computer"), {"kind": "crisp", "as_guest": "1"})
    guest, game = _me(client), Game.objects.get()
    game_services.game_end_now(game=game, user=staff)
    counts = (
        Game.objects.count(),
        Seat.objects.count(),
        GameRecord.objects.count(),
        PlayerStats.objects.filter(user=guest).count(),
    )
    form = client.get(reverse("accounts:signup")).content.decode()
    assert 'id="guest-signup"' in form  # a guest gets the form, not a redirect
    response = client.post(
        reverse("accounts:signup"),
        {"username": "keeper", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert response.status_code == 302 and response["Location"] == reverse("games:lobby")
    user = User.objects.get(username="keeper")
    assert user.pk == guest.pk and not user.is_guest and user.display_name == ""
    assert user.check_password(NEW_PASSWORD)
    assert _me(client) == user  # still signed in, as the new account
    assert counts == (
        Game.objects.count(),
        Seat.objects.count(),
        GameRecord.objects.count(),
        PlayerStats.objects.filter(user=user).count(),
    )
    assert counts[3] >= 1  # the guest's statistics came along
    # The game is in the new account's history: My games and the public profile's list.
    lobby = client.get(reverse("games:lobby")).content.decode()
    assert f'href="/games/{game.pk}/' in lobby
    games = client.get("/api/v1/players/keeper/games/").json()
    assert [g["id"] for g in games["results"]] == [game.pk]
    # And logging in with the new password works.
    fresh = Client()
    fresh.post(reverse("accounts:login"), {"username": "keeper", "password": NEW_PASSWORD})
    assert _me(fresh) == user


def test_guest_names_are_reserved_and_taken_names_refused(client):
    UserFactory(username="taken")
    client.post(reverse("accounts:guest"))
    guest = _me(client)
    for name in ("guest-abc", "TAKEN"):
        response = client.post(
            reverse("accounts:signup"),
            {"username": name, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
        )
        assert response.status_code == 200 and "username" in response.context["form"].errors
    guest.refresh_from_db()
    assert guest.is_guest and guest.username.startswith("guest-")
    # Nobody registers a guest-looking name either.
    Client().post(
        reverse("accounts:signup"),
        {"username": "Guest-123", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert not User.objects.filter(username="Guest-123").exists()


# --- Not rated, not on leaderboards ------------------------------------------------------------


def test_a_game_with_a_guest_is_rated_for_nobody(start_game, staff):
    guest, person = services.guest_create(), UserFactory()
    game = start_game([guest, person])
    game_services.game_end_now(game=game, user=staff)
    record = GameRecord.objects.get(game=game)
    assert (record.rated, record.unrated_reason) == (False, "guest_seat")
    assert not Rating.objects.filter(user__in=[guest, person]).exists()
    # Two people without a guest are rated (the rule is about guests, not everybody).
    a, b = UserFactory(), UserFactory()
    other = start_game([a, b])
    game_services.game_end_now(game=other, user=staff)
    assert GameRecord.objects.get(game=other).rated


def test_a_guest_s_games_stay_unrated_after_sign_up_and_a_recompute(start_game, staff):
    """Signing up keeps the account (same id), so ``history_recompute`` must not decide from
    today's ``is_guest``: the games played as a guest stay unrated, and nobody gets a rating."""
    guest, person = services.guest_create(), UserFactory()
    game = start_game([guest, person])
    game_services.game_end_now(game=game, user=staff)
    services.guest_convert(
        user=guest, username="converted", password=NEW_PASSWORD, email="c@example.com"
    )
    guest.refresh_from_db()
    assert not guest.is_guest
    call_command("history_recompute", stdout=io.StringIO())
    record = GameRecord.objects.get(game=game)
    assert (record.rated, record.unrated_reason) == (False, "guest_seat")
    assert not Rating.objects.filter(user__in=[guest, person]).exists()


def test_guests_are_never_on_a_leaderboard(client):
    guest, person = services.guest_create(), UserFactory()
    for user in (guest, person):
        Rating.objects.create(user=user, kind="crisp", mu=30, sigma=1, ordinal=27, games=9)
    assert [r.user for r in ratings.leaderboard(kind="crisp")] == [person]
    page = client.get("/leaderboards/crisp/").content.decode()
    assert person.username in page and guest.username not in page


# --- Throttled per address ------------------------------------------------------------------------


def test_guest_creation_is_throttled_per_address(settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "guest_create": "2/hour"}
    for _ in range(2):
        Client(REMOTE_ADDR="10.0.0.1").post(reverse("accounts:guest"))
    refused = Client(REMOTE_ADDR="10.0.0.1").post(reverse("accounts:guest"))
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert 'id="guest-throttled"' in refused.content.decode()
    as_json = Client(REMOTE_ADDR="10.0.0.1").post(
        reverse("games:vs-computer"), {"as_guest": "1"}, HTTP_ACCEPT="application/json"
    )
    assert as_json.status_code == 429 and as_json.json()["code"] == "throttled"
    assert User.objects.filter(is_guest=True).count() == 2 and not Game.objects.exists()
    # Another address is its own count.
    Client(REMOTE_ADDR="10.0.0.2").post(reverse("accounts:guest"))
    assert User.objects.filter(is_guest=True).count() == 3


# --- Idle guests are cleaned up ---------------------------------------------------------------


def _age(user: User, days: int) -> None:
    then = timezone.now() - timedelta(days=days)
    User.objects.filter(pk=user.pk).update(last_login=then, date_joined=then)
    Seat.objects.filter(user=user).update(joined_at=then)
    Game.objects.filter(seats__user=user).update(last_played_at=then)


def test_idle_guests_are_deleted_or_anonymised_and_nobody_loses_a_game(start_game, staff, settings):
    settings.CRISP_GUEST_IDLE_DAYS = 7
    person = UserFactory()
    never_played = services.guest_create()
    played = services.guest_create()
    recent = services.guest_create()
    busy = services.guest_create()
    idle_person = UserFactory()
    finished = start_game([played, person])
    game_services.game_end_now(game=finished, user=staff)
    start_game([busy, UserFactory()])  # still in progress
    client = Client()
    client.force_login(played)  # (a log-in is activity: before the ageing below)
    for user in (never_played, played, busy, idle_person):
        _age(user, 8)
    _age(recent, 6)

    assert services.guests_clean_idle() == {"deleted": 1, "anonymised": 1}

    assert not User.objects.filter(pk=never_played.pk).exists()
    played.refresh_from_db()
    assert not played.is_active and played.display_name == "Guest" and played.is_guest
    assert SESSION_KEY not in client.session or not _me(client).is_authenticated
    # The finished game and the other player's history are whole.
    finished.refresh_from_db()
    assert finished.status == Game.Status.FINISHED and finished.seats.count() == 2
    assert GameRecord.objects.filter(game=finished).exists()
    assert PlayerStats.objects.filter(user=person).exists()
    for user in (recent, busy, idle_person):
        user.refresh_from_db()
        assert user.is_active
    # Running it again changes nothing.
    assert services.guests_clean_idle() == {"deleted": 0, "anonymised": 0}


def test_the_clean_up_is_a_periodic_task(settings):
    from accounts.tasks import guests_clean

    schedule = settings.CELERY_BEAT_SCHEDULE["accounts-guests-clean"]
    assert schedule["task"] == guests_clean.name == "accounts.guests_clean"
    guest = services.guest_create()
    _age(guest, settings.CRISP_GUEST_IDLE_DAYS + 1)
    assert guests_clean() == {"deleted": 1, "anonymised": 0}


def test_a_guest_may_log_in_to_an_account_it_already_has(client):
    person = UserFactory()
    client.post(reverse("accounts:guest"))
    assert 'href="/accounts/login/"' in client.get(reverse("home")).content.decode()
    assert client.get(reverse("accounts:login")).status_code == 200  # not sent away
    client.post(
        reverse("accounts:login"), {"username": person.username, "password": DEFAULT_PASSWORD}
    )
    assert _me(client) == person
    # Anybody else signed in is still sent on from the log-in page.
    assert client.get(reverse("accounts:login")).status_code == 302


def test_a_guest_is_asked_before_logging_out_and_the_words_are_translated(client):
    client.post(reverse("accounts:guest"))
    for language, words in [
        ("en", "Nobody can log back in"),
        ("ja", "二度とログイン"),
        ("ru", "Войти в неё снова"),
    ]:
        client.cookies["django_language"] = language
        html = client.get(reverse("home")).content.decode()
        logout = html.split('action="/accounts/logout/"', 1)[1].split(">", 1)[0]
        assert "data-confirm=" in logout and words in logout
