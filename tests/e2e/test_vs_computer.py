"""One person alone plays each game against the computer, on a phone, through the real site.

From the lobby's "Play against the computer" the person lands at a started table with computer
opponents (marked as such in the lobby part of the page and the API); the computer players
move through Celery and the one service layer while the person watches their table update.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from games import services
from games.models import EngineCall, Game, Seat
from tests.e2e.test_play import log_in, painted, shot, wait_live
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]

PHONE = {"width": 360, "height": 740}


def sat_in_shown(seat: int) -> str:
    """A page function: true while ``seat``'s badge is shown and says "sitting in"."""
    return (
        f"() => {{ const b = document.querySelector(\"[data-bot-seat='{seat}']\");"
        " return b && !b.hidden && b.textContent.trim() === 'sitting in'; }"
    )


def _move_if_asked(page: Any) -> None:
    """Make the person's move when the table waits for them (Triple Crown: a declaration or a
    lead), by tapping what a player taps; other tables never wait for the person first."""
    if page.locator(".tc-declare-go").count():
        page.click(".tc-pick:not(.tc-memo) >> nth=0")
        page.click(".tc-memo >> nth=0")
        page.click(".tc-declare-go")
    elif page.locator(".tc-card.playable").count():
        page.click(".tc-card.playable >> nth=-1")  # the fan's last card is not overlapped
        page.click(".tc-play")


@pytest.mark.parametrize("kind", ["crisp", "cribbage", "triple_crown"])
def test_play_against_the_computer_on_a_phone(
    chromium: Any, site: str, artifacts: Path, kind: str
) -> None:
    person = UserFactory(username=f"solo-{kind}", display_name="Solo")
    page = log_in(chromium, site, person.username, PHONE)
    page.select_option("#id_vs_kind", kind)
    page.select_option("#id_vs_level", "easy")
    page.click("#vs-computer")
    page.wait_for_url(f"{site}/games/*/")
    game = Game.objects.get(host=person)
    assert (game.kind, game.status, game.private) == (kind, Game.Status.PLAYING, True)
    seats = list(Seat.objects.filter(game=game).order_by("number").select_related("user"))
    assert seats[0].user == person and all(s.user.is_bot for s in seats[1:])
    wait_live(page)
    # The computer players move by themselves (Celery wakes them after their think time). When
    # the deal makes the person the first to move (Triple Crown's lead falls to them one deal in
    # four, or they hold both crowns), they play through the page as a player would.
    deadline = time.monotonic() + 45
    while time.monotonic() < deadline:
        if EngineCall.objects.filter(game=game, call="apply", seat__gte=1).exists():
            break
        _move_if_asked(page)
        time.sleep(0.5)
    else:  # pragma: no cover - a failure's message
        pytest.fail(f"no computer player moved at the {kind} table")
    # Each computer player's seat at the table says so, with its level; the person's does not.
    for seat in seats[1:]:
        badge = page.locator(f"[data-bot-seat='{seat.number}']").first
        badge.wait_for(state="visible")
        assert badge.inner_text().strip() == "Easy"
        assert badge.locator("svg.bot-icon").count() == 1  # the robot
        assert badge.get_attribute("aria-label") == "Computer player, level: Easy"
    assert page.locator("[data-bot-seat='0']").first.is_hidden()
    shot(page, artifacts, f"vs-computer-{kind}-phone")
    assert page.errors == []


#: A table of each game with a second person and, where the game takes more seats, computer
#: players of another level: (kind, computer players' level, how many).
SIT_IN_TABLES = [("crisp", "hard", 1), ("cribbage", None, 0), ("triple_crown", "medium", 2)]


@pytest.mark.parametrize(("kind", "level", "bots"), SIT_IN_TABLES)
def test_a_player_who_leaves_is_sat_in_for_at_the_others_table(
    chromium: Any, site: str, artifacts: Path, kind: str, level: str | None, bots: int
) -> None:
    """A person leaves a game in progress: the computer that sits in for them is shown on their
    seat at once ("sitting in", over the socket), beside the computer players' level badges."""
    person = UserFactory(username=f"stays-{kind}", display_name="Stays")
    friend = UserFactory(username=f"leaves-{kind}", display_name="Leaves")
    game = services.game_create(host=person, kind=kind, settings={}, private=False)
    services.game_join(game=game.pk, user=friend)
    for _ in range(bots):
        services.game_add_bot(game=game.pk, host=person, level=level)
    services.game_start(game=game.pk, user=person)
    page = log_in(chromium, site, person.username, PHONE, to=f"/games/{game.pk}/")
    wait_live(page)
    word = {"hard": "Hard", "medium": "Medium"}.get(level or "", "")
    for number in range(2, 2 + bots):
        badge = page.locator(f"[data-bot-seat='{number}']").first
        badge.wait_for(state="visible")  # the table is drawn from the socket's first snapshot
        assert badge.inner_text().strip() == word
    friends = page.locator("[data-bot-seat='1']").first
    assert friends.is_hidden()

    services.game_leave_playing(game=game.pk, user=friend)
    page.wait_for_function(sat_in_shown(1))
    assert "Leaves" in (page.locator("[data-bot-seat='1']").first.get_attribute("title") or "")
    assert page.locator("[data-bot-seat='0']").first.is_hidden()
    assert page.locator("#sitin-form").is_hidden()  # the banner is for the sat-in player only
    shot(page, artifacts, f"sitting-in-{kind}-phone")
    page.set_viewport_size({"width": 1366, "height": 800})
    painted(page)
    shot(page, artifacts, f"sitting-in-{kind}-desktop")
    # A fresh page (the boot's seats) and a reconnect's snapshot (the game's card, read once the
    # socket is online) agree: the badge is read once that card's answer is painted.
    card_url = f"{site}/api/v1/games/{game.pk}/"
    with page.expect_response(lambda r: r.url == card_url):
        page.reload()
        wait_live(page)
    painted(page)
    assert "sitting in" in page.locator("[data-bot-seat='1']").first.inner_text()
    assert page.errors == []


def test_a_card_read_before_a_seat_change_does_not_undo_it(chromium: Any, site: str) -> None:
    """The page reads the game's card on every snapshot; when that answer comes back after the
    socket has already said a computer sits in for someone (the card was read before), the badge
    stays -- the page asks again instead of painting the stale seats (CI once saw the badge
    vanish this way)."""
    person = UserFactory(username="stale-card", display_name="Stays")
    friend = UserFactory(username="stale-leaver", display_name="Leaves")
    game = services.game_create(host=person, kind="cribbage", settings={}, private=False)
    services.game_join(game=game.pk, user=friend)
    services.game_start(game=game.pk, user=person)
    page = log_in(chromium, site, person.username, PHONE)
    held: list[tuple[Any, Any]] = []
    cards: list[Any] = []

    def hold_first(route: Any) -> None:
        if held:
            route.continue_()
            return
        held.append((route, route.fetch()))  # read now, answered only when the test says

    card_url = f"{site}/api/v1/games/{game.pk}/"
    page.route(card_url, hold_first)
    page.on("requestfinished", lambda r: cards.append(r) if r.url == card_url else None)
    page.goto(f"{site}/games/{game.pk}/")
    wait_live(page)
    deadline = time.monotonic() + 20
    while not held:
        assert time.monotonic() < deadline, "the page did not read the game's card"
        page.wait_for_timeout(100)
    services.game_leave_playing(game=game.pk, user=friend)
    sat_in = sat_in_shown(1)
    page.wait_for_function(sat_in)
    route, stale = held[0]
    assert stale.json()["seats"][1]["sitting_in"] is False  # the held card is from before
    route.fulfill(response=stale)
    deadline = time.monotonic() + 10
    while len(cards) < 2 and time.monotonic() < deadline:  # the stale answer, a second reading
        page.wait_for_timeout(100)
    painted(page)  # the second answer is painted too
    assert page.evaluate(sat_in), "the stale card undid the seat change"
    assert "Leaves" in (page.locator("[data-bot-seat='1']").first.get_attribute("title") or "")
    assert len(cards) >= 2, "the page did not read the card again"
    assert page.errors == []


def test_sat_in_while_the_page_was_away_the_reconnect_offers_im_back(
    chromium: Any, live_site: Any, artifacts: Path
) -> None:
    """A person's connection drops and their turns run out twice (a short test-only draw
    clock): a computer sits in for them.  When the page reconnects it learns so from what it
    missed, says so on the seat, offers "I'm back" -- and the button gives the seat back."""
    person = UserFactory(username="away-crisp", display_name="Away")
    game = services.game_create(host=person, kind="crisp", settings={}, private=True)
    services.game_add_bot(game=game.pk, host=person, level="easy")
    services.game_start(
        game=game.pk, user=person,
        timers={"draw_seconds": 3, "memorise_ms": 0, "start_delay_ms": 0, "target_score": 500},
    )  # fmt: skip
    page = log_in(chromium, live_site.url, person.username, PHONE, to=f"/games/{game.pk}/")
    wait_live(page)
    assert page.locator("#sitin-form").is_hidden()
    live_site.stop_daphne()
    page.wait_for_selector("#conn[data-state=offline]")
    deadline = time.monotonic() + 60
    while not Seat.objects.get(game=game, number=0).sitting_in:
        assert time.monotonic() < deadline, "the person's seat was not sat in for"
        time.sleep(0.1)
    live_site.start_daphne()
    # The person taps the banner's "Retry now" instead of waiting out its back-off (by then up
    # to 5 s); a page reconnecting by itself after an outage is proven in
    # tests/e2e/test_specials.py, test_cribbage.py and test_triple_crown.py. Tapped only if
    # shown: an attempt may be under way.
    page.evaluate("() => document.querySelector('[data-key=retry-now]:not([hidden])')?.click()")
    page.wait_for_selector("#conn[data-state=online]", timeout=30_000)
    page.wait_for_selector("#sitin-form", state="visible")
    page.wait_for_function(sat_in_shown(0))
    shot(page, artifacts, "im-back-after-reconnect-phone")
    page.click("#im-back")
    page.wait_for_url(f"{live_site.url}/games/{game.pk}/")
    wait_live(page)
    page.wait_for_selector("#sitin-form", state="hidden")
    # The banner goes with the API's answer; the seat's badge with the `seat_back` event the
    # socket brings a moment later (the page no longer reloads to show both at once).
    page.locator("[data-bot-seat='0']").first.wait_for(state="hidden")
    seat = Seat.objects.get(game=game, number=0)
    assert (seat.sitting_in, seat.bot_level) == (False, "")
    assert page.errors == []
