"""The home page and the header in a real browser, on a phone (360x740) and a desktop (issue 24,
items 2 and 6): nothing wider than the screen, the header's menu inside it, and the buttons
doing what they say -- a visitor plays as a guest, a player reaches a live table in one click.

Screenshots go to test-artifacts/e2e/home-*.png for a person to look at.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from games.models import Game
from tests.e2e.conftest import OPEN_CONTEXTS
from tests.e2e.test_play import log_in, shot, wait_live
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]

VIEWPORTS = {"phone": {"width": 360, "height": 740}, "desktop": {"width": 1366, "height": 800}}
#: The language each size is tried in (the phone in Japanese, the desktop in Russian).
LANGUAGE = {"phone": "ja", "desktop": "ru"}

#: A page function: how far the page is wider than the screen (0: nothing sticks out).
OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"


def _fits(page: Any, selector: str, width: int) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, selector


def _on_first_screen(page: Any, selector: str, height: int) -> None:
    """The first game's "play against the computer" needs no scrolling, on a phone too."""
    box = page.locator(selector).bounding_box()
    assert box is not None and box["y"] + box["height"] <= height, box


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_a_visitor_sees_three_games_and_plays_as_a_guest(
    chromium: Any, site: str, artifacts: Path, size: str
) -> None:
    context = chromium.new_context(viewport=VIEWPORTS[size], locale="en-GB")
    OPEN_CONTEXTS.append(context)
    page = context.new_page()
    page.goto(f"{site}/")
    assert page.locator(".home-game").count() == 3
    assert page.evaluate(OVERFLOW) == 0
    _on_first_screen(page, "#crisp [data-home=computer]", VIEWPORTS[size]["height"])
    shot(page, artifacts, f"home-visitor-{size}", full=True)
    page.click("#cribbage [data-home=computer]")  # guest play (tests/e2e/test_guest.py)
    page.wait_for_url(f"{site}/games/*/")
    wait_live(page)
    assert Game.objects.get(host__is_guest=True).kind == "cribbage"


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_a_player_reaches_a_live_table_from_the_home_page(
    chromium: Any, site: str, artifacts: Path, size: str
) -> None:
    width = VIEWPORTS[size]["width"]
    person = UserFactory(
        username=f"home-{size}", display_name="Evangeline", language=LANGUAGE[size]
    )
    page = log_in(chromium, site, person.username, VIEWPORTS[size], to="/")
    assert page.evaluate(OVERFLOW) == 0
    _on_first_screen(page, "#crisp [data-home=computer]", VIEWPORTS[size]["height"])
    for selector in [".brand", ".lang", ".nav-menu summary", ".site-nav a[href='/rules/']"]:
        _fits(page, selector, width)
    shot(page, artifacts, f"home-player-{size}", full=True)
    page.click(".nav-menu summary")
    page.wait_for_selector(".nav-menu-list a[href='/accounts/tokens/']", state="visible")
    _fits(page, ".nav-menu-list", width)
    shot(page, artifacts, f"home-menu-{size}")
    page.click(".nav-menu summary")  # closes it again
    page.click("#triple_crown [data-home=computer]")
    page.wait_for_url(f"{site}/games/*/")
    game = Game.objects.get(host=person)
    assert (game.kind, game.status) == ("triple_crown", Game.Status.PLAYING)
    wait_live(page)
    assert page.errors == []
