"""A turn-based Crisp game (R28) against one computer player, in a real browser, on a phone
and a desktop: the look is a button until taken (no memorise countdown), the clock reads in
hours, and the turn's last step "Call crisp?" is two buttons -- the person calls through it and
the round ends after the computer's final turn."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from games import services
from games.models import Event, Game, Seat
from tests.e2e.test_play import log_in, shot, wait_live
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]

VIEWPORTS = {"phone": {"width": 360, "height": 740}, "desktop": {"width": 1366, "height": 800}}


def _step(page: Any) -> str | None:
    """Take the person's next move of the turn, as a player taps it; the move's key, or None
    when the table does not wait for the person."""
    for key in ("call", "draw-deck", "king", "discard"):
        b = page.locator(f"[data-key={key}]")
        if b.count() and b.first.is_enabled():
            if key == "call":
                return key
            from playwright.sync_api import Error as PlaywrightError  # only with a browser

            try:
                handle = b.first.element_handle(timeout=2000)
                handle.click(timeout=2000)
            except PlaywrightError:  # redrawn away under the click: look again
                return None
            # The move's answer redraws the actions (the clicked button leaves the page).
            page.wait_for_function("(b) => !b.isConnected", arg=handle)
            return key
    return None


@pytest.mark.parametrize("device", ["phone", "desktop"])
def test_turn_based_crisp_call_through_the_step(
    chromium: Any, fast_site: str, artifacts: Path, device: str
) -> None:
    """(`fast_site`: the computer's moves come in 20-80 ms, not a person's 0.7-2.2 s each; its
    pace is not what is under test, the person's step is.)"""
    site = fast_site
    person = UserFactory(username=f"tb-{device}", display_name="Tess")
    game = services.game_create(
        host=person,
        kind="crisp",
        settings={"pace": "turn_based", "turn_seconds": 43_200, "target_score": 150},
        private=True,
    )
    services.game_add_bot(game=game.pk, host=person, level="easy")
    # The clock shortened from 12 h to a little over an hour: it still reads in hours.
    services.game_start(game=game.pk, user=person, timers={"turn_seconds": 3_720})
    me = Seat.objects.get(game=game, user=person).number
    page = log_in(chromium, site, person.username, VIEWPORTS[device], to=f"/games/{game.pk}/")
    wait_live(page)

    # The look waits for the player: a button, nothing turned over, no countdown.
    look = page.locator("[data-key=look]")
    look.wait_for()
    assert page.locator(".peeking").count() == 0
    shot(page, artifacts, f"crisp-tb-look-button-{device}")
    look.click()
    page.wait_for_selector("#my-seat .peeking")
    assert page.locator("#my-seat .peeking").count() == 2
    assert page.locator(".peek-timer .countdown").count() == 0
    page.locator("[data-key=look]").wait_for(state="detached")  # taken: gone for the round
    assert "memorise" not in page.locator("#status-bar").inner_text().lower()
    shot(page, artifacts, f"crisp-tb-looked-{device}")

    # Play the person's turn (the computer moves within seconds when it is first) up to the
    # last step, then call.
    deadline = time.monotonic() + 90
    while True:
        assert time.monotonic() < deadline, "the person was never asked 'Call crisp?'"
        key = _step(page)
        if key == "call":
            break
        page.wait_for_timeout(300 if key is None else 150)
    clock = page.locator("#table-clock").inner_text().strip()
    assert clock.startswith("1 h"), clock  # hours and minutes, not 3,700-odd seconds
    assert "Call crisp?" in page.locator("#actions").inner_text()
    assert page.locator("[data-key=pass]").is_visible()
    assert "Call crisp?" in page.locator("#status-bar").inner_text()
    shot(page, artifacts, f"crisp-tb-call-step-{device}")
    page.click("[data-key=call]")

    # The computer's final turn, then the round's results.
    page.wait_for_selector("#reveal:not([hidden])", timeout=60_000)
    shot(page, artifacts, f"crisp-tb-reveal-{device}")
    game.refresh_from_db()
    assert game.status == Game.Status.PLAYING  # 150 points: one round is not the game
    # The round the person called ended on their call (the computer may have called and ended
    # an earlier round first: its step is its own, answered by its own judgement).
    log = list(Event.objects.filter(game=game, type__in=["call", "reveal"]).order_by("seq"))
    mine = [i for i, e in enumerate(log) if e.type == "call" and e.data["seat"] == me]
    assert len(mine) == 1, [(e.type, e.data.get("seat")) for e in log]
    reveals = [e for e in log[mine[0] :] if e.type == "reveal"]
    assert reveals and reveals[0].data["caller"] == me
    assert not Event.objects.filter(game=game, type="window_closed").exists()
    assert page.errors == []
