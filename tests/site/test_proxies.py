"""The client's address behind a trusted reverse proxy, and never from anyone else's header."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse

from crisp_site.proxies import client_ip
from tests.factories import DEFAULT_PASSWORD, UserFactory

PROXY = "10.0.0.5"


def ip(remote: str, forwarded: str | None = None) -> str:
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return client_ip(RequestFactory().get("/", **extra))


def test_without_trusted_proxies_the_header_is_ignored(settings: Any) -> None:
    settings.TRUSTED_PROXIES = []
    assert ip("198.51.100.7", "203.0.113.9") == "198.51.100.7"


def test_behind_a_trusted_proxy_the_forwarded_client_counts(settings: Any) -> None:
    settings.TRUSTED_PROXIES = ["10.0.0.0/24", "127.0.0.1/32"]
    assert ip(PROXY, "203.0.113.9") == "203.0.113.9"
    # A client-supplied entry left of the real client is never believed.
    assert ip(PROXY, "1.2.3.4, 203.0.113.9") == "203.0.113.9"
    # Two trusted hops: the rightmost untrusted address is the client.
    assert ip(PROXY, "1.2.3.4, 203.0.113.9, 10.0.0.7") == "203.0.113.9"
    assert ip(PROXY, "2001:db8::1") == "2001:db8::1"
    assert ip(PROXY) == PROXY  # no header: the proxy itself made the request
    assert ip(PROXY, "not-an-address") == PROXY


def test_a_direct_client_cannot_forge_its_address(settings: Any) -> None:
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    assert ip("198.51.100.7", "203.0.113.9") == "198.51.100.7"


def _fail_login(client: Client, username: str, **extra: str) -> int:
    response = client.post(
        reverse("accounts:login"), {"username": username, "password": "wrong password"}, **extra
    )
    return response.status_code


@pytest.mark.django_db
def test_the_lockout_behind_a_proxy_locks_the_client_not_everyone(settings: Any) -> None:
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    victim = UserFactory()
    client = Client()
    for _ in range(5):
        last = _fail_login(
            client, victim.username, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="203.0.113.9"
        )
    assert last == 429
    # The same account through the same proxy from another client still logs in.
    response = client.post(
        reverse("accounts:login"),
        {"username": victim.username, "password": DEFAULT_PASSWORD},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR="203.0.113.10",
    )
    assert response.status_code == 302


@pytest.mark.django_db
def test_a_forged_header_from_an_untrusted_peer_does_not_dodge_the_lockout(
    settings: Any,
) -> None:
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    victim = UserFactory()
    client = Client()
    statuses = [
        _fail_login(
            client,
            victim.username,
            REMOTE_ADDR="198.51.100.7",
            HTTP_X_FORWARDED_FOR=f"203.0.113.{n}",
        )
        for n in range(6)
    ]
    assert statuses[-2:] == [429, 429]  # locked out by its real address whatever it claims


def test_a_bad_trusted_proxies_value_stops_start_up() -> None:
    import os
    import subprocess
    import sys

    from tests.processes import BASE_DIR

    env = dict(
        os.environ, DJANGO_SETTINGS_MODULE="crisp_site.settings", TRUSTED_PROXIES="10.0.0.0/33"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "TRUSTED_PROXIES" in result.stderr
