"""Quick match in the browser (issue 24, item 3): two people press "Find me a game" for
Cribbage a few seconds apart, each on their phone, and both land at the same table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from games.models import Game, Seat
from tests.e2e.test_play import log_in, shot, wait_live
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]

PHONE = {"width": 360, "height": 740}


def test_two_people_finding_a_cribbage_game_play_each_other(
    chromium: Any, site: str, artifacts: Path
) -> None:
    first, second = (UserFactory(username=n) for n in ("quick-ann", "quick-bob"))
    page_a = log_in(chromium, site, first.username, PHONE)
    page_a.click("[data-match-kind='cribbage']")
    page_a.locator("#match-waiting").wait_for(state="visible")  # Ann waits
    shot(page_a, artifacts, "quick-match-waiting")
    page_b = log_in(chromium, site, second.username, PHONE)
    page_b.click("[data-match-kind='cribbage']")
    page_b.wait_for_url(f"{site}/games/*/")  # Bob is seated at once
    page_a.wait_for_url(page_b.url)  # Ann's page learns it from the status it polls
    game = Game.objects.get(pk=int(page_b.url.rstrip("/").rsplit("/", 1)[1]))
    assert (game.kind, game.status) == ("cribbage", Game.Status.PLAYING)
    assert set(Seat.objects.filter(game=game).values_list("user_id", flat=True)) == {
        first.pk,
        second.pk,
    }
    for page in (page_a, page_b):
        wait_live(page)
        assert page.errors == []
    shot(page_a, artifacts, "quick-match-table")
    # Back in the lobby while that game is on: the page hears "matched" and stays put.
    page_a.goto(f"{site}/games/")
    page_a.wait_for_function(
        "() => document.getElementById('quick-match').dataset.matchState === 'matched'"
    )
    assert page_a.url == f"{site}/games/"
    assert page_a.locator("#match-waiting").is_hidden()


def test_the_lobby_count_of_people_online_follows_without_a_reload(
    chromium: Any, site: str, artifacts: Path
) -> None:
    """Issue 24, item 4: "N people online" is one of the lobby's live regions (it stayed at its
    first figure until the page was reloaded)."""
    from games import presence, timers

    viewer = UserFactory(username="online-viewer")
    # The page's clock is Playwright's (time flowing as usual): the lobby's own 8-second refresh
    # is run forward below instead of waited for.
    page = log_in(chromium, site, viewer.username, PHONE, clock=True)
    # Nobody else online (earlier tests' people would expire from the count meanwhile), then
    # the lobby's own view counts its viewer.
    timers.client().delete(presence._online_key())
    page.goto(f"{site}/games/")
    before = presence.online_count()
    assert before is not None
    page.wait_for_function(
        "n => (document.getElementById('online-count') || {}).textContent?.includes(String(n))",
        arg=before,
    )
    for n in range(3):  # three more people open a page somewhere
        presence.seen_online(f"u{10_000 + n}")
    page.clock.run_for(8_000)  # the page's next refresh (static/js/lobby.js), due now
    page.wait_for_function(
        "n => (document.getElementById('online-count') || {}).textContent?.includes(String(n))",
        arg=before + 3,
        timeout=30_000,
    )
    assert page.url == f"{site}/games/"
    assert page.errors == []
