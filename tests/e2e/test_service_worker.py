"""The installable web app's service worker in a real browser (issue 26): it registers for the
whole site, and after a game page (its WebSocket, its API reads) was visited its cache holds our
static files and nothing else; offline, a static file still loads and the API does not (the
worker never answers a game's state from a cache)."""

from __future__ import annotations

from typing import Any

import pytest

from games import services
from tests.e2e.test_play import DESKTOP, log_in
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]


@pytest.mark.django_db(transaction=True)
def test_the_worker_caches_static_files_only(chromium: Any, site: str) -> None:
    host = UserFactory()
    game = services.game_create(host=host, settings={"target_score": 100})
    page = log_in(chromium, site, host.username, DESKTOP)

    scope = page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
    assert scope == f"{site}/"
    # The worker controls the pages loaded from now on (it claims open pages when it starts).
    page.goto(f"{site}/games/{game.pk}/")
    page.wait_for_selector("#conn[data-state=online]")  # the game's page and its socket
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    status = page.evaluate(
        f"fetch('/api/v1/games/{game.pk}/state/', {{credentials: 'same-origin'}})"
        ".then((r) => r.status)"
    )
    assert status == 200
    # Each static file the page loaded went through the worker into its cache.
    page.wait_for_function(
        "() => caches.keys().then((names) => Promise.all(names.map((n) => caches.open(n)"
        ".then((c) => c.keys())))).then((lists) => lists.flat()"
        ".some((k) => k.url.includes('/static/css/site.css')))"
    )
    cached = page.evaluate(
        "caches.keys().then((names) => Promise.all(names.map((n) => caches.open(n)"
        ".then((c) => c.keys())))).then((lists) => lists.flat().map((k) => k.url))"
    )
    assert cached, "nothing cached"
    assert all(url.startswith(f"{site}/static/") for url in cached), cached

    # Offline: a cached static file still loads; the game's state does not come from a cache.
    page.context.set_offline(True)
    try:
        css = page.evaluate("fetch('/static/css/site.css').then((r) => r.status)")
        assert css == 200
        state = page.evaluate(
            f"fetch('/api/v1/games/{game.pk}/state/').then((r) => 'answered ' + r.status,"
            " () => 'failed')"
        )
        assert state == "failed"
    finally:
        page.context.set_offline(False)
    assert page.errors == [], page.errors


@pytest.mark.django_db(transaction=True)
def test_a_push_shows_a_notification_that_leads_to_the_game(chromium: Any, site: str) -> None:
    """The worker's ``push`` handler, fed a push message by Chromium itself (DevTools'
    ``ServiceWorker.deliverPushMessage``, the path a push service's message takes)."""
    import json

    host = UserFactory()
    page = log_in(chromium, site, host.username, DESKTOP)
    page.context.grant_permissions(["notifications"], origin=site)
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    cdp = page.context.new_cdp_session(page)
    registrations: list[dict[str, Any]] = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda e: registrations.extend(e["registrations"]),
    )
    cdp.send("ServiceWorker.enable")
    for _ in range(600):  # polled until Chromium reported it (a 60 s ceiling)
        if any(r["scopeURL"] == f"{site}/" for r in registrations):
            break
        page.wait_for_timeout(100)
    [registration] = [r for r in registrations if r["scopeURL"] == f"{site}/"][:1]
    payload = {"title": "Your move", "body": "Cribbage · Ann's table", "url": "/games/7/"}
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {
            "origin": site,
            "registrationId": registration["registrationId"],
            "data": json.dumps(payload),
        },
    )
    # Polled: each look asks the registration again and keeps what it last answered.
    shown = page.wait_for_function(
        """() => {
          navigator.serviceWorker.ready
            .then((r) => r.getNotifications())
            .then((list) => {
              window.shownNotes = list.map((n) => [n.title, n.body, n.data.url]);
            });
          return window.shownNotes && window.shownNotes.length ? window.shownNotes : null;
        }"""
    ).json_value()
    assert shown == [["Your move", "Cribbage · Ann's table", "/games/7/"]]
