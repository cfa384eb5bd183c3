"""A visitor with no account watches a live public game (issue 24), on a phone and a desktop.

A fresh browser context (no cookies) opens the home page, clicks the header's Watch, picks the
public game in progress and watches it move -- its moves are made through the service layer
while the page is open, as a computer player's would be -- without ever being sent to log in.
The page has no JavaScript error, shows "Sign in or play as a guest" and no chat box, and its
socket carried only the spectator's frames.  Screenshots: test-artifacts/e2e/watch-*.png.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from games.models import Game
from tests.e2e.conftest import OPEN_CONTEXTS
from tests.e2e.layout_kit import QUICK_CRISP, VIEWPORTS, drive, players, started

pytestmark = [pytest.mark.browser, pytest.mark.live]


def anonymous_page(browser: Any, viewport: str) -> Any:
    """A page in a fresh context: no cookies, no session, nobody signed in."""
    phone = viewport == "phone"
    context = browser.new_context(
        viewport=VIEWPORTS[viewport], locale="en-GB", has_touch=phone, is_mobile=phone
    )
    OPEN_CONTEXTS.append(context)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.urls = []  # every page the visitor was taken to: never the log-in page
    page.on("framenavigated", lambda frame: page.urls.append(frame.url))
    page.frames_in = []

    def on_socket(socket: Any) -> None:
        socket.on("framereceived", lambda f: page.frames_in.append(f))

    page.on("websocket", on_socket)
    assert context.cookies() == []
    return page


def updates(page: Any) -> list[dict[str, Any]]:
    """The `update` frames the page's socket received so far."""
    frames = [json.loads(f) for f in page.frames_in if f.startswith("{")]
    return [f for f in frames if f.get("type") == "update"]


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_a_visitor_without_an_account_watches_a_live_game(
    chromium: Any, site: str, artifacts: Path, viewport: str
) -> None:
    people = players(2, prefix=f"w{viewport[0]}")
    game = started("cribbage", people, seed=f"watch-{viewport}")
    hidden = started("cribbage", players(2, prefix=f"h{viewport[0]}"), seed="hidden")
    Game.objects.filter(pk=hidden.pk).update(private=True)
    page = anonymous_page(chromium, viewport)
    page.goto(f"{site}/")
    page.click("header.site-header a:has-text('Watch')")
    page.wait_for_url(f"{site}/games/watch/**")
    listed = page.locator("#watch-list a[href^='/games/']")
    assert listed.count() == 1  # the public game; the private one is not listed
    page.screenshot(path=str(artifacts / f"watch-list-{viewport}.png"), full_page=True)
    listed.first.click()
    page.wait_for_url(f"{site}/games/{game.pk}/")
    page.wait_for_selector("#conn[data-state=online]")
    assert page.locator("#play-signin").is_visible()
    assert page.locator("#chat-form").is_hidden() and page.locator("#chat-signin").is_visible()
    page.wait_for_load_state("networkidle")  # the log's history is in
    newest = "() => (document.querySelector('#log li') || {}).textContent || ''"
    before = page.evaluate(newest)
    # The game moves on without the visitor: moves made through the service layer, as a
    # computer player's are, reach the page live.
    target = game.version + 6
    drive(game, lambda g: g.version >= target, seed=3)
    page.wait_for_function(f"() => ({newest})() !== {json.dumps(before)}")
    deadline = time.monotonic() + 60
    while not any(u["version"] >= target for u in updates(page)):
        assert time.monotonic() < deadline, "the page's socket never got the moves"
        page.wait_for_timeout(100)  # lets Playwright deliver the socket's frames
    # Only the spectator's view: no seat, no hand of its own.
    assert all(u["state"]["state"]["seat"] is None for u in updates(page) if u.get("state"))
    page.screenshot(path=str(artifacts / f"watch-table-{viewport}.png"), full_page=True)
    assert not any("/accounts/login/" in url for url in page.urls), page.urls
    assert page.errors == [], page.errors


@pytest.mark.parametrize("viewport", ["phone"])
def test_a_visitor_without_an_account_opens_a_finished_games_replay(
    chromium: Any, site: str, artifacts: Path, viewport: str
) -> None:
    """From the finished table to its replay, stepped to its last move, signed out."""
    people = players(2, prefix="r")
    timers = {**QUICK_CRISP, "between_rounds_ms": 0, "target_score": 20}
    game = started("crisp", people, timers=timers, seed="watch-replay")
    drive(game, lambda g: g.status == "finished")
    page = anonymous_page(chromium, viewport)
    page.goto(f"{site}/games/{game.pk}/")
    page.screenshot(path=str(artifacts / f"watch-finished-{viewport}.png"), full_page=True)
    # The game-over results come first, over the table (a phone's whole screen): a person
    # closes them, then scrolls to the replay's link.
    page.click("[data-key=reveal-close]")
    page.click(f"a[href='/games/{game.pk}/replay/']")
    page.wait_for_url(f"{site}/games/{game.pk}/replay/")
    page.click("#replay-last")
    page.wait_for_selector("#replay-board .scores .total")
    # Only the views a stranger may open: no seat's point of view is offered.
    assert page.locator("option[value^='seat:']").count() == 0
    page.screenshot(path=str(artifacts / f"watch-replay-{viewport}.png"), full_page=True)
    assert not any("/accounts/login/" in url for url in page.urls), page.urls
    assert page.errors == [], page.errors
