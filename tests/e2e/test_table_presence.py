"""An opponent whose page is gone is shown as such at the table (issue 22, item 6), in real
Chromium on a phone (360x740) and a desktop (1366x800).

The seat of a person with no socket open says "offline" in words, while the game's clock for
that player keeps counting down on the table; when they come back the label goes.  A computer
player never has a socket and is never shown as away (static/js/table/presence.js reads who is
a computer from the page's seats, sitin.js).  The viewer's own offline state (locked buttons,
"Offline" in the status bar) is tests/e2e/test_table_controller.py::test_offline_locks_the_table.

The game is moved on through the service layer (the viewer's moves "from another device"),
so the test waits only for what the page shows.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from games import selectors, services
from games.errors import ServiceError
from games.models import Game
from tests.e2e import layout_kit as kit

pytestmark = [pytest.mark.browser, pytest.mark.live]

#: kind -> (computer players beside the two people, settings with a clock on every move,
#: timers)
TABLES: dict[str, tuple[int, dict[str, Any], dict[str, int] | None]] = {
    "crisp": (1, {"draw_seconds": 60}, {"memorise_ms": 0, "start_delay_ms": 0}),
    "triple_crown": (2, {"move_seconds": 60}, None),
    "cribbage": (0, {"move_seconds": 60}, None),
}


def _until_it_is_their_move(game: Game, you: Any, them: Any) -> None:
    """The viewer moves (through the services) until the other person may move: from then on
    the clock that runs is theirs. The computer players move by themselves."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        game.refresh_from_db()
        if selectors.game_legal_actions(game=game, user=them):
            return
        mine = selectors.game_legal_actions(game=game, user=you)
        if not mine:
            time.sleep(0.1)  # a computer player's turn, or a pause between tricks
            continue
        draws = [a for a in mine if a.get("type") == "draw"]
        try:
            services.game_act(
                game=game, user=you, action=(draws or mine)[0], expected_version=game.version
            )
        except ServiceError:
            continue  # the table moved on meanwhile: read it again
    raise AssertionError("the other person never had a move")


def _clock(page: Any) -> int:
    return int("".join(ch for ch in page.inner_text("#table-clock") if ch.isdigit()))


#: Where the viewer watches: a phone and a desktop, two pages of the same person at the same
#: table (one game and one opponent's page per game, not one per size: issue 20).
VIEWPORTS = ("phone", "desktop")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", list(TABLES))
def test_an_opponent_offline_is_labelled_and_their_clock_runs(
    chromium: Any, site: str, artifacts: Path, kind: str
) -> None:
    n_bots, settings, timers = TABLES[kind]
    you, them = kit.players(2, prefix=f"away-{kind}-")
    game = kit.started(
        kind, [you, them], settings=settings, timers=timers,
        bots=n_bots,
    )  # fmt: skip
    their_seat = game.seats.get(user=them).number
    bots = list(game.seats.filter(user__is_bot=True).values_list("number", flat=True))
    away = f"#table-app [data-seat='{their_seat}']"

    theirs = kit.open_page(chromium, site, them, "desktop", f"/games/{game.pk}/")
    pages = {
        size: kit.open_page(chromium, site, you, size, f"/games/{game.pk}/") for size in VIEWPORTS
    }
    for size, page in pages.items():
        page.wait_for_selector(f"{away} [data-presence-seat='{their_seat}'].online")
        # Everybody at the table is connected: nobody is labelled, computers included.
        assert page.locator("#table-app .away-label").count() == 0, size
        assert page.locator("#table-app [data-away]").count() == 0, size
        for seat in bots:
            assert page.locator(f"#table-app [data-presence-seat='{seat}']").is_hidden(), size

    _until_it_is_their_move(game, you, them)
    theirs.context.close()  # their phone is gone
    for size, page in pages.items():
        label = page.locator(f"{away} .away-label")
        label.wait_for()
        assert label.is_visible() and label.inner_text().strip().lower() == "offline", size
        assert page.locator("#table-app .away-label").count() == 1, f"{size}: a computer is away"
        assert page.locator("#table-app [data-away]").count() == 1, size
        assert kit.fully_visible(page, f"{away} .away-label") == [], size
        # Their clock keeps running on the table, for everybody to see.
        page.wait_for_selector("#table-clock")
        first = _clock(page)
        page.wait_for_function(
            "n => parseInt(document.getElementById('table-clock').textContent.replace(/\\D/g, ''))"
            " < n",
            arg=first,
        )
        assert page.locator("#table-clock").is_visible(), size
        kit.shot(page, artifacts, f"away-{kind}-{size}")

    back = kit.open_page(chromium, site, them, "desktop", f"/games/{game.pk}/")
    back.wait_for_selector("#conn[data-state=online]")
    # Waited for on the whole table: another element of their seat also says data-seat (the
    # Cribbage peg board's), so one seat element without data-away proved nothing (CI saw it
    # pass before the presence frame came).
    for page in pages.values():
        page.wait_for_function(
            "() => !document.querySelector('#table-app [data-away], #table-app .away-label')"
        )
    for size, page in pages.items():
        assert page.errors == [], size


@pytest.mark.django_db(transaction=True)
def test_a_computer_player_in_a_lobby_is_never_offline(
    chromium: Any, site: str, artifacts: Path
) -> None:
    """In a game's lobby a person who has not opened the page yet has a grey "offline" dot; a
    computer player has none (it never has a socket)."""
    host, guest = kit.players(2, prefix="lobby-away-")
    game = services.game_create(host=host, kind="crisp", settings={})
    services.game_join(game=game, user=guest, invite_code=game.invite_code)
    services.game_add_bot(game=game, host=host, level="easy")
    page = kit.open_page(chromium, site, host, "phone", f"/games/{game.pk}/")
    page.wait_for_selector("#conn[data-state=online]")
    page.wait_for_selector(".lobby-seat:nth-child(1) [data-presence-seat].online")
    kit.shot(page, artifacts, "away-lobby-phone")
    rows = page.locator(".lobby-seat")
    assert rows.count() == 3
    assert rows.nth(1).locator("[data-presence-seat]:not(.online)").get_attribute("title") == (
        "offline"
    )
    assert rows.nth(2).locator(".bot-badge").is_visible()
    assert rows.nth(2).locator("[data-presence-seat]").count() == 0
    assert rows.nth(2).get_attribute("title") is None
    # Its short name whole beside its badge on a phone (it was cut to "A…").
    name = rows.nth(2).locator(".name")
    assert name.evaluate("e => e.scrollWidth <= e.clientWidth"), name.inner_text()
    box = kit.boxes(page, ".lobby-seats")[0]
    for part in kit.boxes(page, ".lobby-seat .bot-badge, .lobby-seat button"):
        assert kit.inside(part, box), f"{part} sticks out of the players' list {box}"
    assert page.errors == []
