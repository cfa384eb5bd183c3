"""A turn-based game in a real browser (issue 26): the lobby's pace menu and the table's clock.

The host picks Cribbage, then "Turn-based": the live time-per-move menu goes and the turn-based
one (12 h / 1 day / 3 days) comes; the game is created with that pace. Once it has started, the
table's clock counts the day per move in days, hours and minutes, never in seconds.
"""

from __future__ import annotations

from typing import Any

import pytest

from games import services
from games.models import Game
from tests.e2e.test_play import log_in, wait_live
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]

DESKTOP = {"width": 1366, "height": 800}

#: A clock of hours or days: " 1 d 0 h", " 23 h 59 min" (static/js/table/clock.js, leftText).
LONG_CLOCK = (
    "() => { const c = document.getElementById('table-clock');"
    " return !!c && /^ (\\d+ d \\d+ h|\\d+ h \\d+ min)$/.test(c.textContent); }"
)


def test_the_host_creates_a_turn_based_game_and_its_clock_counts_days(
    chromium: Any, site: str
) -> None:
    host = UserFactory(username="slow-host")
    guest = UserFactory(username="slow-guest")
    page = log_in(chromium, site, host.username, DESKTOP)
    page.select_option("#id_kind", "cribbage")
    live_menu = page.locator("#id_cribbage-move_seconds")
    turn_menu = page.locator("#id_create_cribbage-turn_seconds")
    live_menu.wait_for(state="visible")
    assert turn_menu.is_hidden()
    page.select_option("#id_create_cribbage-pace", "turn_based")
    turn_menu.wait_for(state="visible")
    assert live_menu.is_hidden()
    page.select_option("#id_create_cribbage-turn_seconds", "86400")
    page.click("form.create-form button[type=submit]")
    page.wait_for_url(f"{site}/games/*/")
    game = Game.objects.get(host=host)
    assert game.settings == {"move_seconds": None, "pace": "turn_based", "turn_seconds": 86_400}
    services.game_join(game=game, user=guest, invite_code=game.invite_code)
    services.game_start(game=game, user=host)
    page.reload()
    wait_live(page)
    page.wait_for_function(LONG_CLOCK)
    assert page.errors == []
