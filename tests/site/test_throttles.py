"""The throttles at their real rates (the test settings raise them for the rest of the suite).

Each test uses fresh users or a fresh client address, so counters in the shared Redis cache
never carry over from another test.
"""

from __future__ import annotations

import itertools
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from crisp_site import settings as site_settings
from crisp_site import throttles

REAL = site_settings.DEFAULT_THROTTLE_RATES
_addresses = itertools.count(1)


#: An instant 0.25 s into a window of every length the rates use (a whole number of hours).
STILL = 1_800_000_000.25


@pytest.fixture(autouse=True)
def real_rates(settings: Any, redis_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real rates, a clock that stands still, and no counters left from an earlier run (a
    new test database starts its user ids at 1 again, and the counters of that window may still
    be in Redis).

    The windows are fixed (one counter per minute or hour): on a real clock, a slow machine that
    spreads a test's 30 requests across a minute's boundary counts them in two windows and never
    reaches the limit (CI saw it once).
    """
    settings.THROTTLE_RATES = dict(REAL)
    monkeypatch.setattr(throttles, "_clock", lambda: STILL)
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    for key in redis_client.scan_iter(f"{prefix}:*:throttle:*"):
        redis_client.delete(key)


def fresh_address() -> str:
    """A client address no other test (or run) has used: 10.x.y.z from a random base."""
    n = uuid.uuid4().int % (2**24 - 10_000) + next(_addresses)
    return f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"


def make_user() -> Any:
    return get_user_model().objects.create_user(
        username=f"t{uuid.uuid4().hex[:12]}",
        password="pw-not-secret-123",
        email=f"{uuid.uuid4().hex[:8]}@example.com",
    )


def api_for(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def limit(scope: str) -> int:
    return throttles.parse_rate(REAL[scope])[0]


def assert_throttled(response: Any) -> None:
    assert response.status_code == 429, response.content[:300]
    assert int(response["Retry-After"]) >= 1


@pytest.mark.django_db
def test_invite_code_guessing_is_throttled_even_in_parallel() -> None:
    user = make_user()
    client = api_for(user)
    n = limit("join") + 20

    def guess(i: int) -> int:
        body = {"invite_code": f"WRONG{i:04d}"}
        try:
            return client.post("/api/v1/games/join/", body, format="json").status_code
        finally:
            connection.close()  # the test client leaves it open; the pool wants it back

    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(guess, range(n)))
    # Atomic counting: exactly the limit gets through, however the requests interleave.
    assert statuses.count(429) == n - limit("join"), statuses
    response = client.post("/api/v1/games/join/", {"invite_code": "WRONG"}, format="json")
    assert_throttled(response)
    assert response.json()["code"] == "throttled"
    # Another user is not affected.
    other = api_for(make_user()).post("/api/v1/games/join/", {"invite_code": "X"}, format="json")
    assert other.status_code == 404


@pytest.mark.django_db
def test_invite_code_guessing_on_the_lobby_page_is_throttled_too() -> None:
    client = Client()
    client.force_login(make_user(), backend="django.contrib.auth.backends.ModelBackend")
    for n in range(limit("join")):
        response = client.post("/games/join/", {"invite_code": f"NOPE{n:03d}"}, follow=True)
        assert "Too many attempts" not in response.content.decode()
    response = client.post("/games/join/", {"invite_code": "NOPE"}, follow=True)
    assert "Too many attempts" in response.content.decode()


@pytest.mark.django_db
def test_lobby_creation_and_token_creation_are_throttled() -> None:
    user = make_user()
    client = api_for(user)
    for _ in range(limit("game_create")):
        # Refused for a reason other than the throttle is fine: it still counts as an attempt.
        bad = {"settings": {"target_score": 7}}
        assert client.post("/api/v1/games/", bad, format="json").status_code == 400
    assert_throttled(client.post("/api/v1/games/", {}, format="json"))
    assert client.get("/api/v1/games/").status_code == 200  # reads are not limited

    for n in range(limit("token_create")):
        response = client.post("/api/v1/me/tokens/", {"name": f"t{n}"}, format="json")
        assert response.status_code == 201
    assert_throttled(client.post("/api/v1/me/tokens/", {"name": "one more"}, format="json"))


@pytest.mark.django_db
def test_rest_actions_are_throttled_per_user(monkeypatch: pytest.MonkeyPatch) -> None:
    # A per-second limit: the clock stands still, so a slow machine cannot spread the requests
    # over several windows; then it moves on one second and the next window admits again.
    now = [STILL]
    monkeypatch.setattr(throttles, "_clock", lambda: now[0])
    client = api_for(make_user())

    def act() -> int:
        return client.post(
            "/api/v1/games/999999/actions/", {"action": {"type": "draw"}}, format="json"
        ).status_code

    statuses = [act() for _ in range(limit("game_act") + 5)]
    assert statuses == [404] * limit("game_act") + [429] * 5, statuses
    now[0] += 1
    assert act() == 404


@pytest.mark.django_db
def test_signup_page_is_throttled_per_address() -> None:
    address = fresh_address()
    client = Client(REMOTE_ADDR=address)
    for _ in range(limit("signup")):
        response = client.post("/accounts/signup/", {"username": ""})
        assert response.status_code == 200  # the form again, with its errors
    response = client.post("/accounts/signup/", {"username": ""})
    assert_throttled(response)
    assert "Too many attempts" in response.content.decode()
    assert (
        Client(REMOTE_ADDR=fresh_address()).post("/accounts/signup/", {"username": ""}).status_code
        == 200
    )


@pytest.mark.django_db
def test_password_reset_mails_to_one_address_are_throttled() -> None:
    user = make_user()
    sent = 0
    for _ in range(limit("password_reset_email") + 3):
        # From ever new addresses: the per-e-mail limit still holds.
        client = Client(REMOTE_ADDR=fresh_address())
        response = client.post("/accounts/password/reset/", {"email": user.email})
        if response.status_code == 302:
            sent += 1
        else:
            assert_throttled(response)
    assert sent == limit("password_reset_email")
    assert len([m for m in mail.outbox if user.email in m.to]) == sent


@pytest.mark.django_db
def test_password_reset_requests_from_one_address_are_throttled() -> None:
    client = Client(REMOTE_ADDR=fresh_address())
    for n in range(limit("password_reset")):
        response = client.post("/accounts/password/reset/", {"email": f"n{n}@example.com"})
        assert response.status_code == 302
    assert_throttled(client.post("/accounts/password/reset/", {"email": "last@example.com"}))


@pytest.mark.django_db
def test_a_cache_outage_lets_requests_through(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("redis is down")

    monkeypatch.setattr(throttles.cache, "add", broken)
    client = api_for(make_user())
    statuses = {
        client.post("/api/v1/games/join/", {"invite_code": "NOPE"}, format="json").status_code
        for _ in range(limit("join") + 2)
    }
    assert statuses == {404}


def test_counters_live_in_redis_shared_by_every_process() -> None:
    from django.conf import settings

    assert settings.CACHES["default"]["BACKEND"].endswith(".RedisCache")
    assert settings.CACHES["default"]["LOCATION"] == settings.REDIS_URL


def test_rates_parse_and_the_environment_overrides_them(monkeypatch: pytest.MonkeyPatch) -> None:
    assert throttles.parse_rate("10/hour") == (10, 3600)
    assert throttles.parse_rate("3/s") == (3, 1)
    monkeypatch.setenv("THROTTLE_RATES", "signup=5/minute, game_act=2/second")
    rates = site_settings._throttle_rates()
    assert (rates["signup"], rates["game_act"]) == ("5/minute", "2/second")
    monkeypatch.setenv("THROTTLE_RATES", "nosuchscope=1/s")
    with pytest.raises(Exception, match="THROTTLE_RATES"):
        site_settings._throttle_rates()


@pytest.mark.django_db
def test_the_pages_refusal_is_translated() -> None:
    from django.utils import translation

    from crisp_site.throttles import throttled_message

    with translation.override("ja"):
        assert "5 分後" in throttled_message(300)
    with translation.override("ru"):
        assert "через 5 минут" in throttled_message(300)
        assert "через 1 минуту" in throttled_message(10)
    with translation.override("en"):
        assert throttled_message(61) == "Too many attempts. Please try again in 2 minutes."
