"""The special cards in the browser (Queen, Jack, King) and a full table of eight.

The game is started through the service layer with a short memorise period, and the deck is
stacked right after the deal (tests only: the stored engine snapshot is rewritten under the
game's row lock before anyone has drawn), so the first draws are a Queen, a Jack and a King.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db import transaction

from games import clock, services
from games.models import Game
from tests.e2e.test_play import (
    DESKTOP,
    PHONE,
    log_in,
    painted,
    play_turn,
    shot,
    wait_live,
    whose_turn,
)
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]


def stack_deck(game: Game, first: list[str]) -> None:
    """Put cards of these ranks (taken from the deck, in this order) on top of the deck."""
    with transaction.atomic():
        g = Game.objects.select_for_update().get(pk=game.pk)
        deck = g.state["round"]["deck"]
        top = []
        for rank in first:
            card = next(c for c in deck if c[0] == rank and c not in top)
            top.append(card)
        g.state["round"]["deck"] = top + [c for c in deck if c not in top]
        g.save(update_fields=["state"])


def end_the_opening_look(game: Game) -> None:
    """End round 1's memorise period now, as its timer would at its time.

    The test starts the game with a long memorise period, so that a page that takes seconds to
    open on a loaded machine still sees the opening look (a 2.5 s period was missed so at load
    30-40), then ends it here once every page has drawn it: the deadline moved to now in the
    stored snapshot, then fired through the service layer as the timer fires it (the real
    timer, later, finds it stale and changes nothing).
    """
    with transaction.atomic():
        g = Game.objects.select_for_update().get(pk=game.pk)
        g.state["round"]["turn"]["start_at"] = clock.now_ms()
        g.save(update_fields=["state"])
    assert services.game_fire_deadline(game_id=game.pk, key="r1:memorise")


#: The viewer's own centre card is shown (a Jack's look; the other places may show looks too).
CENTRE_PEEK = """() => { const s = document.querySelectorAll('.seat.mine .slot');
  return s.length === 3 && !!s[1].querySelector('.peek'); }"""


def peeks(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        ".seat.mine .slot", "els => els.map(e => e.querySelector('.peek') ? 'P' : '-')"
    )


@pytest.mark.django_db(transaction=True)
def test_queen_jack_and_king(chromium: Any, site: str, artifacts: Path) -> None:
    a_user = UserFactory(username="aiko", display_name="Aiko")
    b_user = UserFactory(username="boris", display_name="Boris", language="ru")
    game = services.game_create(host=a_user, settings={"target_score": 100})
    services.game_join(game=game, user=b_user)
    # No start delay before the turns (the specials are what is under test; the delay is
    # test_play.py's round's): 2 s a turn fewer (issue 20).
    # The opening look lasts until both pages have drawn it (a fixed 2.5 s period was missed
    # by a page that took longer to open on a loaded machine), then ends at once.
    services.game_start(
        game=game, user=a_user, timers={"memorise_ms": 600_000, "start_delay_ms": 0}
    )  # fmt: skip
    stack_deck(game, ["Q", "J", "K", "4", "5", "6", "7"])

    a = log_in(chromium, site, "aiko", DESKTOP, to=f"/games/{game.pk}/")
    b = log_in(chromium, site, "boris", DESKTOP, to=f"/games/{game.pk}/")
    for page in (a, b):
        wait_live(page)
        page.wait_for_selector(".seat.mine .pcard.peek")  # the opening look …
    # … and its end. The page shows a look until the end it was told with the deal (its own
    # timing is test_table_controller.py's), so each page opens the table again after it.
    end_the_opening_look(game)
    for page in (a, b):
        page.reload()
        wait_live(page)
        page.wait_for_function("() => !document.querySelector('.pcard.peek')")
    pages = {"aiko": a, "boris": b}
    first = whose_turn(pages)
    p, q = (a, b) if first == "aiko" else (b, a)

    # Queen: give my left card, take the other player's right card; each may look once.
    p.click("[data-key=draw-deck]")
    p.wait_for_selector("[data-key=queen]")
    assert p.locator("[data-key=discard]").count() == 1  # a Queen may also just be discarded
    assert p.locator(".seat.mine button.slot").count() == 0  # and can never be swapped in
    p.click("[data-key=queen]")
    p.locator(".seat.mine button.slot").nth(0).click()
    p.wait_for_selector(".seat:not(.mine) button.slot.pickable")
    shot(p, artifacts, "20-queen-pick-opponent")
    p.locator(".seat:not(.mine) button.slot").nth(2).click()
    p.wait_for_selector(".seat.mine .pcard.peek")
    q.wait_for_selector(".seat.mine .pcard.peek")
    assert peeks(p) == ["P", "-", "-"]
    assert peeks(q) == ["-", "-", "P"]
    shot(q, artifacts, "21-queen-received-look")
    # The looks last 3 s on the page; the game goes on meanwhile, and they are seen to end
    # below (waited for here, they cost the test 3 s each, issue 20).
    # Each side reads it in its own person (grammar in every language: their own messages).
    a_log, b_log = a.inner_text("#log"), b.inner_text("#log")  # Boris reads Russian
    if p is a:
        assert "You played Q" in a_log and "swapped your left card with Boris's right" in a_log
        assert "Aiko играет Q" in b_log and "меняет свою карту (левая) на вашу (правая)" in b_log
    else:
        assert "Вы играете Q" in b_log
        assert "меняете свою карту (левая) на карту игрока Aiko" in b_log
        assert "swapped their left card with your right card" in a_log

    # Jack: the other player looks at their own centre card, once.
    assert whose_turn(pages) != first
    q.click("[data-key=draw-deck]")
    q.click("[data-key=jack]")
    q.wait_for_function(CENTRE_PEEK)
    assert peeks(q)[:2] == ["-", "P"]  # the right: the Queen's look, if it is still shown
    assert p.locator(".seat:not(.mine) .pcard.peek").count() == 0  # nobody else sees it
    shot(q, artifacts, "22-jack-look")

    # King: two extra draws, each played like a draw (here: discarded).
    assert whose_turn(pages) == first
    p.click("[data-key=draw-deck]")
    p.wait_for_selector("[data-key=king]")
    assert p.locator("[data-key=discard]").count() == 0  # a King must be used
    p.click("[data-key=king]")
    for _ in range(2):
        p.wait_for_selector("[data-key=draw-deck]")
        shot(p, artifacts, "23-king-extra-draw")
        p.click("[data-key=draw-deck]")
        p.click("[data-key=discard]")
        p.wait_for_function("() => !document.querySelector('[data-key=discard]')")
    assert whose_turn(pages) != first
    # The whole discard pile can be looked through.
    q.click("#view-pile")
    q.wait_for_selector("#pile-dialog[open] .pcard.face")
    assert q.locator("#pile-all .pcard").count() == 5  # Q, J, 4, 5, K
    shot(q, artifacts, "24-pile-viewer")
    q.keyboard.press("Escape")
    # Every look (the Queen's two, the Jack's) is hidden again after its time.
    for page in (p, q):
        page.wait_for_function("() => !document.querySelector('.pcard.peek')", timeout=60_000)
        assert page.locator(".seat.mine .pcard.face").count() == 0
    assert a.errors == [] and b.errors == []


@pytest.mark.django_db(transaction=True)
def test_a_table_of_eight(chromium: Any, site: str, artifacts: Path) -> None:
    names = ["Aiko", "Boris", "Chiara", "Dmitri", "Emeka", "Fumiko", "Gustavo", "Hana"]
    users = [UserFactory(username=n.lower(), display_name=n) for n in names]
    lobby = log_in(chromium, site, "chiara", DESKTOP, clock=True)
    # The lobby's list of open games refreshes by itself: its 8-second timer run forward on the
    # page's (Playwright's) clock, not waited for.
    game = services.game_create(host=users[0], settings={"draw_seconds": 30})
    lobby.clock.run_for(8_000)
    lobby.wait_for_selector(f"#open-games-body form[action='/games/{game.pk}/join/']")
    assert lobby.errors == []
    for user in users[1:]:
        services.game_join(game=game, user=user)
    services.game_start(game=game, user=users[0])
    # The table on a page of its own, on the real clock (the lobby's is ahead now).
    page = log_in(chromium, site, "chiara", DESKTOP, to=f"/games/{game.pk}/")
    wait_live(page)
    page.wait_for_selector(".seat.mine .pcard.peek")
    assert page.locator(".seat").count() == 8
    # No two seats overlap on the desktop table.
    boxes = page.eval_on_selector_all(
        ".seat",
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return [r.left, r.top, r.right, r.bottom]; })",
    )
    for i, (l1, t1, r1, b1) in enumerate(boxes):
        for l2, t2, r2, b2 in boxes[i + 1 :]:
            assert r1 <= l2 or r2 <= l1 or b1 <= t2 or b2 <= t1, "seats overlap"
    shot(page, artifacts, "30-eight-desktop")
    page.set_viewport_size(PHONE)
    painted(page)
    shot(page, artifacts, "31-eight-phone", full=True)
    assert page.errors == []
    # Someone without a seat watches a public game: every card face down, no actions.
    UserFactory(username="ivan", display_name="Ivan")
    watcher = log_in(chromium, site, "ivan", PHONE, to=f"/games/{game.pk}/")
    wait_live(watcher)
    watcher.wait_for_selector("#actions .muted")
    assert watcher.locator(".seat").count() == 8
    assert watcher.locator(".seat.mine").count() == 0
    assert watcher.locator(".pcard.face").count() == 0
    assert watcher.errors == []


@pytest.mark.django_db(transaction=True)
def test_reconnects_and_catches_up(chromium: Any, live_site: Any, artifacts: Path) -> None:
    """The server goes away; the table says so, reconnects with backoff and catches up."""
    a_user = UserFactory(username="aiko", display_name="Aiko")
    b_user = UserFactory(username="boris", display_name="Boris")
    game = services.game_create(host=a_user)
    services.game_join(game=game, user=b_user)
    services.game_start(game=game, user=a_user, timers={"memorise_ms": 60_000})
    page = log_in(chromium, live_site.url, "aiko", DESKTOP, to=f"/games/{game.pk}/")
    wait_live(page)
    page.wait_for_selector(".seat.mine .pcard.peek")

    live_site.stop_daphne()
    page.wait_for_selector("#conn[data-state=offline]")
    # The banner counts down to the next attempt and offers to try at once.
    page.wait_for_function(
        "() => /retrying in \\d+ s/.test(document.getElementById('conn').textContent)"
    )
    assert page.locator("#conn [data-key=retry-now]").is_visible()
    page.click("#conn [data-key=retry-now]")  # nothing there yet: it tries, fails, counts again
    page.wait_for_selector("#conn[data-state=offline] [data-key=retry-now]")
    shot(page, artifacts, "40-connection-lost")
    # Meanwhile the other player takes the opening look.
    services.game_act(game=game.pk, user=b_user, action={"type": "look"}, expected_version=None)
    live_site.start_daphne()
    wait_live(page)
    page.wait_for_function(
        "() => document.getElementById('log').textContent.includes('Boris looked')"
    )
    assert page.errors == []


def set_target(game: Game, target: int) -> None:
    """Tests only: lower the end score in the stored snapshot, so one round ends the game."""
    with transaction.atomic():
        g = Game.objects.select_for_update().get(pk=game.pk)
        g.state["settings"]["target_score"] = target
        g.save(update_fields=["state"])


@pytest.mark.django_db(transaction=True)
def test_game_over_shows_the_winners(chromium: Any, site: str, artifacts: Path) -> None:
    a_user = UserFactory(username="aiko", display_name="Aiko")
    b_user = UserFactory(username="boris", display_name="Boris", language="ja")
    game = services.game_create(host=a_user, settings={"target_score": 50})
    services.game_join(game=game, user=b_user)
    # No start delay before the two turns (test_play.py's round has it): 2 s a turn fewer.
    services.game_start(game=game, user=a_user, timers={"memorise_ms": 1500, "start_delay_ms": 0})
    set_target(game, 1)
    stack_deck(game, ["4", "5", "6"])  # no specials: plain discards
    a = log_in(chromium, site, "aiko", DESKTOP, to=f"/games/{game.pk}/")
    b = log_in(chromium, site, "boris", PHONE, to=f"/games/{game.pk}/")
    for page in (a, b):
        wait_live(page)
    pages = {"aiko": a, "boris": b}
    first = whose_turn(pages)
    p, q = (a, b) if first == "aiko" else (b, a)
    play_turn(p, "discard")
    p.click("[data-key=call]")
    assert whose_turn(pages) != first
    play_turn(q, "discard")
    for page in (a, b):
        page.wait_for_selector("#reveal:not([hidden]) .winners")
        assert page.locator("#reveal a[href='/games/']").count() == 1
    shot(a, artifacts, "50-game-over-desktop-en")
    shot(b, artifacts, "51-game-over-phone-ja")
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    winners = [["Aiko", "Boris"][s] for s in game.winners]
    text = a.inner_text(".winners")
    assert all(name in text for name in winners) or "You win" in text
    assert a.errors == [] and b.errors == []
