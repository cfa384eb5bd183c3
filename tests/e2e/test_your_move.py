"""Issue 26, "your move, everywhere", in real Chromium on a phone (360x740) and a desktop
(1366x800): the header's count, the "Your move" page, the title and the favicon badge, live.

Person A has a Cribbage game awaiting them (its lay-away awaits both players, with three hours
per move) and a Crisp game where it is B's turn.  The games are driven through the service
layer ("from another device"); the test waits only for what the page shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from games import services
from games.models import Game
from tests.e2e import layout_kit as kit

pytestmark = [pytest.mark.browser, pytest.mark.live]

QUICK = {"memorise_ms": 0, "start_delay_ms": 0, "window_ms": 0}


def _turn_seat(game: Game) -> int:
    game.refresh_from_db()
    return game.state["round"]["turn"]["seat"]


def _move(game: Any, user: Any) -> None:
    """A whole Crisp turn: draw from the deck, then discard (or whatever the drawn card
    demands) until the turn has passed on."""
    from games import selectors

    seat = game.seats.get(user=user).number
    for _ in range(10):
        game.refresh_from_db()
        if game.state["round"]["turn"]["seat"] != seat:
            return
        legal = selectors.game_legal_actions(game=game, user=user)
        pick = next(
            (a for a in legal if a.get("type") == "discard"),
            next((a for a in legal if a.get("type") == "draw"), legal[0] if legal else None),
        )
        assert pick is not None, "the turn's seat has nothing to do"
        services.game_act(game=game, user=user, action=pick, expected_version=game.version)
    raise AssertionError("the turn never passed on")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_the_count_the_page_and_the_title_follow_your_moves(
    chromium: Any, site: str, artifacts: Path, viewport: str
) -> None:
    a, b, c = kit.players(3, prefix=f"ym-{viewport}-")
    cribbage = kit.started("cribbage", [c, a], timers={"move_seconds": 3 * 3600})
    crisp = kit.started("crisp", [a, b], settings={"target_score": 100}, timers=QUICK)
    if _turn_seat(crisp) == crisp.seats.get(user=a).number:
        _move(crisp, a)  # now it is B's turn: the Crisp game does not await A
    assert crisp.seats.get(user=b).number == _turn_seat(crisp)

    page = kit.open_page(chromium, site, a, viewport, "/games/your-move/")
    link = "#your-move-link"
    page.wait_for_function("() => document.title.startsWith('(1) ')")
    assert page.get_attribute(link, "data-count") == "1"
    assert page.inner_text(link).replace("\n", " ").strip() == "Your move (1)"
    rows = page.locator(".turn-row")
    assert rows.count() == 1
    row = rows.first
    assert row.get_attribute("data-game") == str(cribbage.pk)
    assert c.display_name in row.inner_text()
    assert "left" in row.locator(".turn-left").inner_text()  # "2 hours, 59 minutes left"
    assert row.locator(".turn-since").inner_text() == "your move since just now"
    page.wait_for_function("() => document.querySelector('link[rel~=icon]').dataset.badge === '1'")
    assert not kit.fully_visible(page, ".turn-row", across_only=True)
    kit.shot(page, artifacts, f"your-move-one-{viewport}")

    # B moves in the other game: it is A's move there now, and the page says so at once. The
    # tab is in the background (as the browser would report it), so it chimes -- unless the
    # site's sound switch is off (the phone's run).
    page.wait_for_function(f"() => document.querySelector('{link}').dataset.live === '1'")
    page.evaluate("() => Object.defineProperty(document, 'hidden', {get: () => true})")
    if viewport == "phone":
        page.evaluate("() => localStorage.setItem('table.sound', 'off')")
    _move(crisp, b)
    page.wait_for_function(f"() => document.querySelector('{link}').dataset.count === '2'")
    page.wait_for_function("() => document.title.startsWith('(2) ')")
    page.wait_for_function("() => document.querySelectorAll('.turn-row').length === 2")
    page.wait_for_function("() => document.querySelector('link[rel~=icon]').dataset.badge === '2'")
    chimes = page.get_attribute(link, "data-chimes")
    assert chimes == (None if viewport == "phone" else "1")
    games = [rows.nth(i).get_attribute("data-game") for i in range(2)]
    # Soonest deadline first: Cribbage's three hours, then Crisp without a clock.
    assert games == [str(cribbage.pk), str(crisp.pk)]
    assert "no time limit" in rows.nth(1).inner_text()
    assert not kit.fully_visible(page, ".turn-row", across_only=True)
    assert not kit.fully_visible(page, link, across_only=True)
    kit.shot(page, artifacts, f"your-move-two-{viewport}")

    # Another page has the count too; the row's link takes A to the table.
    rows.nth(1).locator("a.turn-link").click()
    page.wait_for_url(f"{site}/games/{crisp.pk}/")
    # The table writes its own title ("● Your turn · …"): ours stays in front, once.
    page.wait_for_function(
        "() => document.title.startsWith('(2) ● ') && document.title.split('(2)').length === 2"
    )
    assert page.get_attribute(link, "data-count") == "2"
    kit.shot(page, artifacts, f"your-move-table-{viewport}")
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_nothing_waiting_says_what_to_do(chromium: Any, site: str, artifacts: Path) -> None:
    (a,) = kit.players(1, prefix="ym-empty-")
    page = kit.open_page(chromium, site, a, "phone", "/games/your-move/")
    assert page.locator("#turn-list-empty").is_visible()
    assert page.get_attribute("#your-move-link", "data-count") == "0"
    assert not page.title().startswith("(")
    assert page.locator("#your-move-link .your-move-count").is_hidden()
    kit.shot(page, artifacts, "your-move-empty-phone")
    page.click("#turn-list-empty a.button")
    page.wait_for_url(f"{site}/games/")


@pytest.mark.django_db(transaction=True)
def test_the_list_in_japanese_on_a_phone(chromium: Any, site: str, artifacts: Path) -> None:
    a, c = kit.players(2, prefix="ym-ja-", language="ja")
    kit.started("cribbage", [c, a], timers={"move_seconds": 26 * 3600})
    page = kit.open_page(chromium, site, a, "phone", "/games/your-move/")
    assert page.inner_text("#your-move-link").replace("\n", " ").strip() == "あなたの番 (1)"
    assert page.inner_text(".turn-since") == "たった今あなたの番になりました"
    assert page.inner_text(".turn-left").startswith("残り")
    assert not kit.fully_visible(page, ".turn-row", across_only=True)
    kit.shot(page, artifacts, "your-move-ja-phone")
